//! Local models load one after another, in the order they were started: each load's peak
//! (ONNX Runtime folding MiniLM's int8 weights to float32 through temporaries, USE-m3 reading
//! its archive) then comes on top of the models already loaded, not on top of another load's
//! peak (docs/benchmarks-history.md "Two local models: USE-m3 beside MiniLM (issue 41)", "Memory,
//! second round").

use std::collections::BTreeSet;
use std::sync::{Condvar, Mutex};

struct Turns {
    /// Tickets handed out.
    issued: u64,
    /// The ticket whose load may run.
    serving: u64,
    /// Tickets given up before their turn (their model's thread never ran): skipped.
    given_up: BTreeSet<u64>,
}

static TURNS: Mutex<Turns> = Mutex::new(Turns { issued: 0, serving: 0, given_up: BTreeSet::new() });
static NEXT: Condvar = Condvar::new();

/// A place in the queue of loads, taken when a model is started; its turn ends when dropped.
pub struct Ticket(u64);

impl Ticket {
    pub fn take() -> Ticket {
        let mut t = turns();
        t.issued += 1;
        Ticket(t.issued - 1)
    }

    /// Waits until every model started before this one has loaded (or failed to).
    pub fn wait(&self) {
        let mut t = turns();
        while t.serving != self.0 {
            t = NEXT.wait(t).unwrap_or_else(|e| e.into_inner());
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut t = turns();
        if t.serving == self.0 {
            t.serving += 1;
            loop {
                let next = t.serving;
                if !t.given_up.remove(&next) {
                    break;
                }
                t.serving += 1;
            }
        } else {
            t.given_up.insert(self.0);
        }
        NEXT.notify_all();
    }
}

fn turns() -> std::sync::MutexGuard<'static, Turns> {
    TURNS.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
#[test]
fn loads_run_in_the_order_started_and_a_ticket_given_up_is_skipped() {
    use std::sync::Arc;
    // Other tests of this binary may take tickets too: only the order of these is checked.
    let order = Arc::new(Mutex::new(Vec::new()));
    let (a, b, c) = (Ticket::take(), Ticket::take(), Ticket::take());
    let run = |name: &'static str, t: Ticket| {
        let order = order.clone();
        std::thread::spawn(move || {
            t.wait();
            order.lock().unwrap().push(name);
        })
    };
    let third = run("c", c);
    let first = run("a", a);
    drop(b); // as when a model's thread cannot be spawned
    first.join().unwrap();
    third.join().unwrap();
    assert_eq!(*order.lock().unwrap(), ["a", "c"]);
}
