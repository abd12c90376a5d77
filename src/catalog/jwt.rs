//! JSON Web Tokens the OAuth client signs itself (RFC 7515, 7519): the client assertion of
//! `private_key_jwt` (RFC 7523 §2.2). With `ring` (already linked for TLS), from a PKCS#8 PEM
//! key: ES256 (P-256) or RS256.
//!
//! Invariant: the key never prints (no `Debug` holds it) and no error quotes the PEM.

use data_encoding::{BASE64, BASE64URL_NOPAD};
use ring::rand::SystemRandom;
use ring::signature::{EcdsaKeyPair, RsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING, RSA_PKCS1_SHA256};
use serde_json::{json, Value};

/// A private key that signs JWTs.
pub(crate) enum SigningKey {
    Es256(EcdsaKeyPair),
    Rs256(RsaKeyPair),
}

impl SigningKey {
    /// A PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`) key. `alg`, when given, must be the key's:
    /// `ES256` for a P-256 key, `RS256` for an RSA key; else the key decides.
    pub fn from_pem(pem: &str, alg: Option<&str>) -> Result<SigningKey, String> {
        let der = pem_body(pem).ok_or("the private key is not a PKCS#8 PEM (-----BEGIN PRIVATE KEY-----)")?;
        let rng = SystemRandom::new();
        let key = match EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &der, &rng) {
            Ok(k) => SigningKey::Es256(k),
            Err(_) => match RsaKeyPair::from_pkcs8(&der) {
                Ok(k) => SigningKey::Rs256(k),
                Err(_) => return Err("the private key is neither a P-256 nor an RSA PKCS#8 key".into()),
            },
        };
        match alg {
            Some(a) if a != key.alg() => Err(format!("signingAlgorithm {a} does not fit the key (an {} key)", key.alg())),
            _ => Ok(key),
        }
    }

    /// A fresh P-256 key and its PKCS#8 document (to keep it).
    pub fn generate_es256() -> Result<(SigningKey, Vec<u8>), String> {
        let rng = SystemRandom::new();
        let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).map_err(|_| "cannot generate a key")?;
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der.as_ref(), &rng).map_err(|_| "cannot generate a key")?;
        Ok((SigningKey::Es256(key), der.as_ref().to_vec()))
    }

    /// A P-256 key from its PKCS#8 document.
    pub fn es256_from_pkcs8(der: &[u8]) -> Result<SigningKey, String> {
        let rng = SystemRandom::new();
        EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &rng).map(SigningKey::Es256).map_err(|_| "not a P-256 PKCS#8 key".into())
    }

    /// The public key as a JWK (RFC 7517), for a DPoP proof's header; only for P-256 keys.
    pub fn public_jwk(&self) -> Option<Value> {
        use ring::signature::KeyPair;
        let SigningKey::Es256(k) = self else { return None };
        // Uncompressed point: 0x04, x, y.
        let point = k.public_key().as_ref();
        let (x, y) = point.get(1..)?.split_at(32);
        Some(json!({"kty": "EC", "crv": "P-256", "x": BASE64URL_NOPAD.encode(x), "y": BASE64URL_NOPAD.encode(y)}))
    }

    pub fn alg(&self) -> &'static str {
        match self {
            SigningKey::Es256(_) => "ES256",
            SigningKey::Rs256(_) => "RS256",
        }
    }

    /// `header.claims.signature`, the header given `alg`.
    pub fn sign(&self, mut header: Value, claims: &Value) -> Result<String, String> {
        header["alg"] = json!(self.alg());
        let input = format!("{}.{}", encode_json(&header), encode_json(claims));
        let rng = SystemRandom::new();
        let signature = match self {
            SigningKey::Es256(k) => k.sign(&rng, input.as_bytes()).map_err(|_| "signing failed")?.as_ref().to_vec(),
            SigningKey::Rs256(k) => {
                let mut out = vec![0; k.public().modulus_len()];
                k.sign(&RSA_PKCS1_SHA256, &rng, input.as_bytes(), &mut out).map_err(|_| "signing failed")?;
                out
            }
        };
        Ok(format!("{input}.{}", BASE64URL_NOPAD.encode(&signature)))
    }
}

fn encode_json(v: &Value) -> String {
    BASE64URL_NOPAD.encode(v.to_string().as_bytes())
}

/// The DER inside a `PRIVATE KEY` PEM.
fn pem_body(pem: &str) -> Option<Vec<u8>> {
    let start = pem.find("-----BEGIN PRIVATE KEY-----")? + "-----BEGIN PRIVATE KEY-----".len();
    let end = pem[start..].find("-----END PRIVATE KEY-----")? + start;
    let b64: String = pem[start..end].chars().filter(|c| !c.is_whitespace()).collect();
    BASE64.decode(b64.as_bytes()).ok()
}

/// A fresh random identifier (`jti`): 128 bits, base64url.
pub(crate) fn random_id() -> String {
    let mut bytes = [0u8; 16];
    // The OS's generator failing is not survivable for OAuth anyway; fall back to the clock.
    if getrandom::fill(&mut bytes).is_err() {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        bytes = t.to_le_bytes();
    }
    BASE64URL_NOPAD.encode(&bytes)
}

/// Seconds since the Unix epoch.
pub(crate) fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{KeyPair, UnparsedPublicKey, ECDSA_P256_SHA256_FIXED};

    fn pem_of(der: &[u8]) -> String {
        format!("-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n", BASE64.encode(der))
    }

    #[test]
    fn an_es256_token_verifies_with_the_public_key() {
        let rng = SystemRandom::new();
        let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let key = SigningKey::from_pem(&pem_of(der.as_ref()), None).unwrap();
        assert_eq!(key.alg(), "ES256");
        let token = key.sign(json!({"typ": "JWT"}), &json!({"iss": "me"})).unwrap();
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: Value = serde_json::from_slice(&BASE64URL_NOPAD.decode(parts[0].as_bytes()).unwrap()).unwrap();
        assert_eq!(header, json!({"typ": "JWT", "alg": "ES256"}));
        let SigningKey::Es256(pair) = &key else { unreachable!() };
        let public = UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, pair.public_key().as_ref().to_vec());
        let signature = BASE64URL_NOPAD.decode(parts[2].as_bytes()).unwrap();
        public.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature).unwrap();
        // Tampered claims do not verify.
        assert!(public.verify(format!("{}.x{}", parts[0], parts[1]).as_bytes(), &signature).is_err());
    }

    #[test]
    fn a_key_of_another_kind_or_shape_is_refused_without_quoting_it() {
        let rng = SystemRandom::new();
        let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let err = SigningKey::from_pem(&pem_of(der.as_ref()), Some("RS256")).err().unwrap();
        assert!(err.contains("does not fit"), "{err}");
        let err = SigningKey::from_pem("-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----", None).err().unwrap();
        assert!(!err.contains("c2VjcmV0"), "{err}");
        assert!(SigningKey::from_pem("not a pem", None).is_err());
    }
}
