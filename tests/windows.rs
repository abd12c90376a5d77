//! Windows behaviours, run under Wine by `scripts/windows.sh test` through the Windows
//! `toolreg.exe` and the Windows fixture server (docs/install.md, "Tested under Wine"). On other
//! platforms this file is empty: each test here needs Windows' own mechanisms.
#![cfg(windows)]

mod support;

#[path = "windows/batch.rs"]
mod batch;
#[path = "windows/framing.rs"]
mod framing;
#[path = "windows/models.rs"]
mod models;
#[path = "windows/node.rs"]
mod node;
#[path = "windows/profile.rs"]
mod profile;
#[path = "windows/sandbox.rs"]
mod sandbox;
#[path = "windows/tree.rs"]
mod tree;
#[path = "windows/wine.rs"]
mod wine;
