//! No Landlock off Linux (Windows: tested under Wine, tests/windows/sandbox.rs): the ABI is always 0, so a
//! server asking for a sandbox is refused and the default reports itself off.

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Abi(pub u32);

impl Abi {
    pub fn probe() -> Abi {
        Abi(0)
    }
    pub fn has_tcp(self) -> bool {
        false
    }
    pub fn has_scopes(self) -> bool {
        false
    }
}
