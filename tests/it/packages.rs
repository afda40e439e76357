//! The packages of the workspace as cargo sees them (`cargo metadata`): what
//! `cargo install --path .` and `cargo install --path mcp-dap` install, and that the test
//! fixtures are a package that is never published, so no install puts them on a user's PATH.

use serde_json::{Value, json};
use std::process::Command;

/// `cargo metadata --no-deps` of the workspace: its packages, without resolving dependencies.
fn metadata() -> Value {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--offline",
            "--format-version",
            "1",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata writes JSON")
}

/// Each package of the workspace: its name, whether it can be published (`publish: []` is
/// `publish = false`), and its binaries, sorted.
fn packages(metadata: &Value) -> Vec<Value> {
    let mut packages: Vec<Value> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| {
            let mut bins: Vec<&str> = p["targets"]
                .as_array()
                .expect("targets")
                .iter()
                .filter(|t| t["kind"] == json!(["bin"]))
                .map(|t| t["name"].as_str().expect("a target name"))
                .collect();
            bins.sort_unstable();
            json!({"name": p["name"], "publishable": p["publish"] != json!([]), "bins": bins})
        })
        .collect();
    packages.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    packages
}

#[test]
fn cargo_install_of_the_bridge_installs_no_fixture() {
    assert_eq!(
        packages(&metadata()),
        vec![
            json!({"name": "mcp-bridge", "publishable": true,
                "bins": ["mcp-bridge", "mcp-example-server"]}),
            json!({"name": "mcp-dap", "publishable": true, "bins": ["mcp-dap"]}),
            json!({"name": "mcp-test-fixtures", "publishable": false,
                "bins": ["mcp-fixture-server", "mcp-legacy-server"]}),
        ]
    );
}
