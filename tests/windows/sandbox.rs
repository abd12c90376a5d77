//! `sandbox` on Windows, where toolreg has none: absent, the server runs unconfined and its
//! status says so; asked for (`true` or a policy), it fails closed and the server never starts.

use super::wine::*;
use serde_json::json;

#[test]
fn no_sandbox_runs_unconfined_with_a_note_and_an_asked_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pid = |n: &str| dir.path().join(n);
    let f = fixture();
    let servers = vec![
        server("plain", &f, &[], json!({})),
        server("yes", &f, &["--pid-file", pid("yes").to_str().unwrap()], json!({"sandbox": true})),
        server("policy", &f, &["--pid-file", pid("policy").to_str().unwrap()], json!({"sandbox": {"network": false}})),
    ];
    let mut s = sidecar(json!({}), servers, &[("plain", "ready"), ("yes", "error"), ("policy", "error")]);
    let plain = s.server_status("plain");
    assert_eq!(plain["sandbox"]["state"], "off", "{plain}");
    assert!(plain["sandbox"]["notes"].to_string().contains("no sandbox on this platform"), "{plain}");
    for id in ["yes", "policy"] {
        let st = s.server_status(id);
        assert_eq!(st["sandbox"]["state"], "refused", "{st}");
        assert!(st["error"].as_str().unwrap().contains("sandbox refused"), "{st}");
        assert!(!pid(id).exists(), "{id} was started");
    }
    s.shutdown();
}
