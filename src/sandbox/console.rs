//! `console.log` (and `info`, `warn`, `error`, which print alike): arguments joined by spaces,
//! strings as they are, anything else as JSON, one line per call; kept to a byte bound so a
//! script that prints in a loop costs no more memory than the bound.

use super::outcome::cut;
use rquickjs::function::Rest;
use rquickjs::{Ctx, Function, Object, Value};
use std::cell::RefCell;
use std::rc::Rc;

#[derive(Default)]
pub struct Console {
    pub text: String,
    /// Whether anything was dropped past the bound.
    pub cut: bool,
    max: usize,
}

impl Console {
    pub fn new(max: usize) -> Self {
        Console { text: String::new(), cut: false, max }
    }

    fn push_line(&mut self, line: &str) {
        let room = self.max.saturating_sub(self.text.len());
        let kept = cut(line, room.saturating_sub(1));
        if kept.len() == line.len() && room > line.len() {
            self.text.push_str(line);
            self.text.push('\n');
        } else {
            self.text.push_str(kept);
            self.cut = true;
        }
    }
}

fn show<'js>(ctx: &Ctx<'js>, v: Value<'js>) -> String {
    if let Some(s) = v.as_string() {
        return s.to_string().unwrap_or_default();
    }
    if v.is_undefined() {
        return "undefined".into();
    }
    match ctx.json_stringify(v) {
        Ok(Some(s)) => s.to_string().unwrap_or_default(),
        // A function, a symbol, a cycle: said by kind, never a crash of the script.
        Ok(None) => "undefined".into(),
        Err(_) => {
            let _ = ctx.catch();
            "[unprintable]".into()
        }
    }
}

/// Installs `console` on the context's globals, writing into `out`.
pub fn install<'js>(ctx: &Ctx<'js>, out: Rc<RefCell<Console>>) -> rquickjs::Result<()> {
    let console = Object::new(ctx.clone())?;
    for name in ["log", "info", "warn", "error", "debug"] {
        let out = out.clone();
        let f = Function::new(ctx.clone(), move |ctx: Ctx<'js>, args: Rest<Value<'js>>| {
            let mut out = out.borrow_mut();
            if out.text.len() >= out.max {
                // Full: the line is not even built.
                out.cut = true;
                return;
            }
            let parts: Vec<String> = args.0.into_iter().map(|v| show(&ctx, v)).collect();
            out.push_line(&parts.join(" "));
        })?;
        console.set(name, f)?;
    }
    ctx.globals().set("console", console)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_past_the_bound_are_cut_and_counted() {
        let mut c = Console::new(10);
        c.push_line("abcd");
        c.push_line("efghijkl");
        assert_eq!(c.text, "abcd\nefgh");
        assert!(c.cut);
    }
}
