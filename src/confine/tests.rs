use super::*;
use std::os::unix::process::CommandExt;
use std::process::Command;

fn launch<'a>(command: &'a str, args: &'a [String], env: Vec<(&'a str, &'a str)>) -> Launch<'a> {
    Launch { command, args, env, cwd: None }
}

#[test]
fn sandbox_setting_wire_shape() {
    let on: Sandbox = serde_json::from_value(serde_json::json!(true)).unwrap();
    assert_eq!(on, Sandbox::Switch(true));
    let p: Sandbox = serde_json::from_value(serde_json::json!({"network": false, "write": ["~/notes"], "limits": {"memoryMb": 64}})).unwrap();
    let Sandbox::Policy(p) = p else { panic!() };
    assert_eq!((p.network, p.write.as_slice(), p.limits.memory_mb), (false, &["~/notes".to_owned()][..], Some(64)));
    // A misspelt field is named, not ignored: a policy the user did not get would be silent.
    let e = serde_json::from_value::<Sandbox>(serde_json::json!({"netwrok": false})).unwrap_err().to_string();
    assert!(e.contains("sandbox: unknown field `netwrok`"), "{e}");
    let e = serde_json::from_value::<Sandbox>(serde_json::json!("yes")).unwrap_err().to_string();
    assert!(e.contains("true, false or an object"), "{e}");
}

#[test]
fn the_default_profile_keeps_the_home_closed_and_opens_what_the_configuration_names() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path().to_str().unwrap();
    let data = home.path().join("project");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::create_dir_all(home.path().join(".npm")).unwrap();
    let args = vec![format!("--root={}", data.display()), h.to_owned()];
    let mem = format!("{h}/state/memory.json");
    std::fs::create_dir_all(home.path().join("state")).unwrap();
    let g = profile::grants(&launch("true", &args, vec![("HOME", h), ("MEMORY_FILE", &mem)]), &[], &[]);
    let writable = |p: &std::path::Path| g.list.iter().any(|x| x.writable && x.path == p);
    assert!(writable(&data), "{:?}", g.list);
    assert!(writable(&home.path().join(".npm")));
    // The memory file does not exist yet: its directory opens, shown by the env key only.
    let state = g.list.iter().find(|x| x.path == home.path().join("state")).unwrap();
    assert!(state.writable && state.shown.starts_with("$MEMORY_FILE"), "{state:?}");
    assert!(!g.list.iter().any(|x| x.path == home.path()), "the home itself was opened: {:?}", g.list);
    assert!(g.notes.iter().any(|n| n.contains("home directory")), "{:?}", g.notes);
}

#[test]
fn a_script_inside_node_modules_opens_its_package_tree_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("node_modules/pkg/dist/index.js");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    std::fs::write(&script, "").unwrap();
    let args = vec![script.to_str().unwrap().to_owned()];
    let g = profile::grants(&launch("node", &args, vec![("HOME", "/nonexistent-home")]), &[], &[]);
    let tree = std::fs::canonicalize(dir.path().join("node_modules")).unwrap();
    assert!(g.list.iter().any(|x| x.path == tree && !x.writable), "{:?}", g.list);
}

#[test]
fn sandbox_false_is_off_and_says_so() {
    let r = describe(Some(&Sandbox::Switch(false)), &launch("true", &[], vec![]));
    assert_eq!(r.state, SandboxState::Off);
    assert!(r.summary().contains("sandbox: false"), "{}", r.summary());
}

/// Runs `sh -c script` confined by `sandbox`, with HOME at `home` and `$SECRET` the path
/// `secret` (given to the process only, not named in its configuration); its success and stderr.
fn confined(sandbox: &Sandbox, home: &str, script: &str, secret: &std::path::Path) -> (bool, String) {
    let args = vec!["-c".to_owned(), script.to_owned()];
    let c = prepare(Some(sandbox), &launch("/bin/sh", &args, vec![("HOME", home)])).expect("this kernel gives the sandbox");
    assert!(c.enforced(), "{:?}", c.report);
    let mut cmd = Command::new("/bin/sh");
    cmd.args(&args).env("HOME", home).env("SECRET", secret);
    // SAFETY: `enter` only makes syscalls (enter.rs).
    let report = c.report.clone();
    unsafe { cmd.pre_exec(move || c.enter()) };
    let out = cmd.output().unwrap_or_else(|e| panic!("{script}: {e} ({report:?})"));
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Whether a confined `sh` failed for want of the path: Landlock's refusal, or the path hidden
/// (not in the server's mount namespace).
fn kept_out(ok: bool, err: &str) -> bool {
    !ok && (err.contains("Permission denied") || err.contains("No such file or directory"))
}

#[test]
fn a_confined_process_cannot_read_the_home_but_can_use_tmp() {
    // Wherever the checkout, the target and $TMPDIR are: the secret sits directly in the host's
    // /tmp, which the server sees its own copy of; the home in /var/tmp, likewise.
    let home = tempfile::tempdir_in("/var/tmp").unwrap();
    let secret_dir = tempfile::Builder::new().prefix("toolreg-secret-").tempdir_in("/tmp").unwrap();
    let secret = secret_dir.path().join("id_ed25519");
    std::fs::write(&secret, "PRIVATE").unwrap();
    std::fs::write(home.path().join(".bashrc"), "# own").unwrap();
    let h = home.path().to_str().unwrap();
    let (ok, err) = confined(&Sandbox::Switch(true), h, "cat \"$SECRET\"", &secret);
    assert!(kept_out(ok, &err), "{err}");
    let (ok, err) = confined(&Sandbox::Switch(true), h, "cat \"$HOME/.bashrc\"", &secret);
    assert!(kept_out(ok, &err), "{err}");
    // Its own /tmp: writable, and nothing of the host's in it.
    // (Relative paths: `/tmp` named in the script would open the host's, as the user asked.)
    let (ok, err) = confined(&Sandbox::Switch(true), h, "cd / && echo x > tmp/toolreg-confine-$$ && rm tmp/toolreg-confine-$$", &secret);
    assert!(ok, "{err}");
    let name = secret_dir.path().file_name().unwrap().to_str().unwrap().to_owned();
    let (ok, err) = confined(&Sandbox::Switch(true), h, &format!("cd / && ls -a tmp var/tmp dev/shm >&2 && ! ls tmp | grep -q {name}"), &secret);
    assert!(ok, "{err}");
    // Widened for one path: readable, at the same path.
    let policy = Sandbox::Policy(SandboxPolicy { read: vec![secret_dir.path().to_str().unwrap().to_owned()], ..SandboxPolicy::default() });
    let (ok, err) = confined(&policy, h, "cat \"$SECRET\"", &secret);
    assert!(ok, "{err}");
}

#[test]
fn the_private_temp_keeps_what_the_configuration_names_under_it() {
    let named = tempfile::Builder::new().prefix("toolreg-named-").tempdir_in("/tmp").unwrap();
    let other = tempfile::Builder::new().prefix("toolreg-other-").tempdir_in("/tmp").unwrap();
    let args = vec![named.path().to_str().unwrap().to_owned()];
    let home = "/nonexistent-home";
    let g = profile::grants(&launch("/bin/sh", &args, vec![("HOME", home)]), &[], &[]);
    let layout = private::layout(&g.list, &[], Some(std::path::Path::new(home)), None);
    assert!(layout.dirs.iter().any(|d| d.path == std::path::Path::new("/tmp") && d.writable), "{layout:?}");
    let named_real = std::fs::canonicalize(named.path()).unwrap();
    assert!(layout.binds.contains(&named_real), "{layout:?}");
    assert!(!layout.binds.iter().any(|b| b.starts_with(other.path())), "{layout:?}");
    // `/tmp` named whole stays the host's.
    let whole = vec!["/tmp".to_owned()];
    let g = profile::grants(&launch("/bin/sh", &whole, vec![("HOME", home)]), &[], &[]);
    let layout = private::layout(&g.list, &[], None, None);
    assert!(!layout.dirs.iter().any(|d| d.path == std::path::Path::new("/tmp")), "{layout:?}");
}

#[test]
fn paths_inside_a_shell_script_or_a_flag_are_named() {
    let words: Vec<&str> = profile::path_words("exec '/opt/srv/server' --db=/data/x \"/q w\"; cat /etc/x;").collect();
    assert_eq!(words, ["/opt/srv/server", "/data/x", "/q", "/etc/x"]);
}

#[test]
fn a_configured_path_variable_is_shown_by_its_key() {
    let g = profile::grants(&launch("true", &[], vec![("PATH", "/opt/secret-tool/bin:/usr/bin"), ("HOME", "/nonexistent")]), &[], &[]);
    let shown: Vec<&str> = g.list.iter().map(|x| x.shown.as_str()).collect();
    assert!(shown.contains(&"$PATH entry 1") && !shown.iter().any(|s| s.contains("secret-tool (PATH)")), "{shown:?}");
}
