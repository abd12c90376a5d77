//! How a run ended, in plain data: the returned JSON (cut to its bound, with the size it had)
//! or the error, the console, the number of host calls, the script's running time.

use std::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub struct Finished {
    pub ended: Ended,
    /// What `console.log` printed, at most `maxOutputBytes`.
    pub console: String,
    /// Whether console output was dropped past the bound.
    pub console_cut: bool,
    pub calls: u32,
    /// Time spent running JavaScript (waits for host calls excluded).
    pub ran: Duration,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ended {
    /// The returned value as JSON (`None`: `undefined`, or a value JSON cannot say), cut to
    /// `maxOutputBytes` when longer; `total` is its length before the cut.
    Returned { json: Option<String>, total: usize },
    Failed(ScriptError),
}

/// Why a script ended without a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptError {
    /// An exception the script did not catch (its own, or a tool's refusal it let through),
    /// with the line in the script it was thrown from when known.
    Thrown { message: String, line: Option<u32> },
    /// Over the running-time limit.
    Timeout { limit: Duration },
    /// Over the memory limit.
    Memory { limit: usize },
    /// Recursion past the stack limit.
    Stack,
    /// `maxCalls` was reached and the script let the refusal through.
    Calls { limit: u32 },
    /// It awaits a promise that nothing can settle (no host call is in flight).
    Stalled,
    /// Its host went away (the call was cancelled).
    Cancelled,
    /// The engine could not start or failed on its own (not the script's doing).
    Engine(String),
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScriptError::Thrown { message, line: Some(l) } => write!(f, "Uncaught {message} (line {l})"),
            ScriptError::Thrown { message, line: None } => write!(f, "Uncaught {message}"),
            ScriptError::Timeout { limit } => write!(f, "the script ran longer than its limit of {} ms and was stopped", limit.as_millis()),
            ScriptError::Memory { limit } => write!(f, "the script used more than its memory limit of {} MiB and was stopped", limit >> 20),
            ScriptError::Stack => f.write_str("the script recursed too deeply (stack limit) and was stopped"),
            ScriptError::Calls { limit } => write!(f, "the script made more than {limit} tool calls (its limit)"),
            ScriptError::Stalled => f.write_str("the script awaits a promise that nothing will settle (only tool calls can be awaited)"),
            ScriptError::Cancelled => f.write_str("the call was cancelled"),
            ScriptError::Engine(e) => write!(f, "the sandbox failed: {e}"),
        }
    }
}

/// The line of the script in an exception's stack (`script:LINE:COL`), the first frame that
/// is in the script. The wrapper opens on the script's first line, so lines match as written.
pub fn script_line(stack: &str) -> Option<u32> {
    let mut rest = stack;
    while let Some(at) = rest.find(super::engine::FILENAME) {
        rest = &rest[at + super::engine::FILENAME.len()..];
        if let Some(tail) = rest.strip_prefix(':') {
            let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(n) = digits.parse() {
                return Some(n);
            }
        }
    }
    None
}

/// `text` cut to at most `max` bytes on a character boundary.
pub fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_the_first_frame_in_the_script() {
        assert_eq!(script_line("    at f (script:3:7)\n    at <anonymous> (script:9:1)\n"), Some(3));
        assert_eq!(script_line("    at <eval> (native)\n"), None);
        assert_eq!(script_line("script: no digits, script:12:4"), Some(12));
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        assert_eq!(cut("héllo", 2), "h");
        assert_eq!(cut("héllo", 3), "hé");
        assert_eq!(cut("abc", 10), "abc");
    }
}
