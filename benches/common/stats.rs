//! What the benches report of their samples.
#![allow(dead_code)]

use std::time::Duration;

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}
