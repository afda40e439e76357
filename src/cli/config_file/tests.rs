//! The configuration file, read from text: the editors' files as they are, and every error
//! with its exact place, member and words.

use super::*;
use crate::transport::open::UpstreamSpec;
use std::time::Duration;

fn env(name: &str) -> Option<String> {
    match name {
        "GITHUB_TOKEN" => Some("ghp_t0k".to_owned()),
        "HOME" => Some("/home/u".to_owned()),
        _ => None,
    }
}

fn config(text: &str) -> GatewayConfig {
    match read("mcp.json", text, &mut env, &EnvSecrets::default()) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

fn error(text: &str) -> String {
    match read("mcp.json", text, &mut env, &EnvSecrets::default()) {
        Ok(_) => panic!("read: {text}"),
        Err(e) => e.to_string(),
    }
}

fn child(server: &ServerEntry) -> (String, Vec<String>, ChildEnv) {
    match server.cli.config().upstream {
        UpstreamSpec::Child { command, args, env } => (
            command.to_string_lossy().into_owned(),
            args.iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            env,
        ),
        other => panic!("{other:?}"),
    }
}

const CLAUDE_DESKTOP: &str = r#"{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "${userHome}/Desktop"],
      "env": {"DEBUG": "1", "NODE_OPTIONS": null, "PORT": 8080},
      "cwd": "/tmp"
    },
    "github": {
      "url": "https://api.example.com/mcp",
      "headers": {"Authorization": "Bearer ${env:GITHUB_TOKEN}"},
      "mcp-bridge": {"callTimeout": 30, "denyTool": ["delete_*"], "prefix": "gh_"}
    }
  },
  "globalShortcut": "Ctrl+Space"
}"#;

#[test]
fn a_claude_desktop_file_is_read_as_it_is() {
    let c = config(CLAUDE_DESKTOP);
    let names: Vec<&str> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["filesystem", "github"]);
    let fs = &c.servers[0];
    assert_eq!(fs.member, "mcpServers.filesystem");
    assert_eq!(fs.at, Position { line: 3, column: 5 });
    assert!(fs.enabled);
    let (command, args, env) = child(fs);
    assert_eq!(command, "npx");
    assert_eq!(
        args,
        [
            "-y",
            "@modelcontextprotocol/server-filesystem",
            "/home/u/Desktop"
        ]
    );
    assert_eq!(
        env,
        ChildEnv {
            vars: vec![
                ("DEBUG".into(), Some("1".into())),
                ("NODE_OPTIONS".into(), None),
                ("PORT".into(), Some("8080".into())),
            ],
            cwd: Some("/tmp".into()),
        }
    );
    assert_eq!(
        fs.namespace.as_ref().map(|n| n.prefix.as_str()),
        Some("filesystem__")
    );
    let gh = &c.servers[1];
    let bridge = gh.cli.config();
    let UpstreamSpec::Http(spec) = &bridge.upstream else {
        panic!("a URL");
    };
    assert_eq!(spec.url.as_str(), "https://api.example.com/mcp");
    let headers: Vec<(String, String)> = spec
        .headers
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_str().unwrap_or("?").to_owned()))
        .collect();
    assert_eq!(
        headers,
        [("authorization".to_owned(), "Bearer ghp_t0k".to_owned())]
    );
    assert_eq!(bridge.timeouts.call, Duration::from_secs(30));
    assert_eq!(bridge.timeouts.list, Duration::from_secs(120));
    assert!(bridge.item_filter.is_some());
    assert_eq!(
        gh.namespace
            .as_ref()
            .map(|n| (n.prefix.as_str(), n.uri_token.as_str())),
        Some(("gh_", "github"))
    );
    assert_eq!(c.secret_vars, ["GITHUB_TOKEN"]);
}

const VS_CODE: &str = r#"// VS Code writes comments
{
  "inputs": [{"type": "promptString", "id": "key", "password": true}],
  "servers": {
    /* a local server */
    "memory": {
      "type": "stdio",
      "command": "/usr/bin/mcp-memory",
      "args": [],
      "mcp-bridge": {"enabled": false, "callTimeout": 5,},
    },
    "remote": {
      "type": "http",
      "url": "http://127.0.0.1:3000/mcp",
      "gallery": true,
    },
  },
}
"#;

#[test]
fn a_vs_code_file_with_comments_and_trailing_commas_is_read_as_it_is() {
    let c = config(VS_CODE);
    let names: Vec<(&str, bool)> = c
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.enabled))
        .collect();
    assert_eq!(names, [("memory", false), ("remote", true)]);
    assert_eq!(c.servers[0].member, "servers.memory");
    assert_eq!(c.servers[0].namespace, None);
    assert_eq!(
        c.servers[0].cli.config().timeouts.call,
        Duration::from_secs(5)
    );
    assert!(c.servers[1].cli.config().upstream.is_http());
    assert_eq!(
        c.servers[1].namespace.as_ref().map(|n| n.prefix.as_str()),
        Some("remote__")
    );
}

#[test]
fn a_variable_of_a_server_that_is_not_enabled_stays_as_written() {
    let c = config(
        r#"{"servers": {"off": {"command": "${env:NOPE}", "mcp-bridge": {"enabled": false}}}}"#,
    );
    assert_eq!(child(&c.servers[0]).0, "${env:NOPE}");
}

/// Each error of a file that cannot be used: the file, the line and column, the member and
/// what is wrong.
#[test]
fn each_bad_file_is_told_with_its_place_and_member() {
    let cases: &[(&str, &str)] = &[
        (
            "{\"servers\": {\"a\": {\"command\": \"x\"}\n  \"b\": 1}}",
            "mcp.json:1:35: invalid JSON: Expected comma",
        ),
        ("", "mcp.json:1:1: expected an object"),
        ("[1]", "mcp.json:1:1: expected an object"),
        (
            "{\"editor\": {}}",
            "mcp.json:1:1: no \"mcpServers\" (Claude Desktop, Cursor) or \"servers\" (VS Code) member: the file names no server",
        ),
        (
            "{\"servers\": {}, \"mcpServers\": {}}",
            "mcp.json:1:17: mcpServers: both \"servers\" and \"mcpServers\": a file has one of them",
        ),
        ("{\"servers\": {}}", "mcp.json:1:13: servers: no server"),
        (
            "{\"servers\": []}",
            "mcp.json:1:13: servers: expected an object of servers",
        ),
        (
            "{\"servers\": {\"a\": \"npx\"}}",
            "mcp.json:1:19: servers.a: expected an object",
        ),
        (
            "{\"servers\": {\n  \"a\": {\"type\": \"websocket\", \"url\": \"https://h/mcp\"}}}",
            "mcp.json:2:17: servers.a.type: unknown type \"websocket\": expected \"stdio\", \"http\" or \"streamable-http\"",
        ),
        (
            "{\"servers\": {\"a\": {\"type\": \"sse\", \"url\": \"https://h/sse\"}}}",
            "mcp.json:1:28: servers.a.type: type \"sse\" (the HTTP+SSE transport of MCP 2024-11-05) is not one mcp-bridge speaks: give the server's Streamable HTTP URL with type \"http\"",
        ),
        (
            "{\"servers\": {\"a\": {\"type\": \"stdio\", \"url\": \"https://h/mcp\"}}}",
            "mcp.json:1:28: servers.a.type: type \"stdio\" takes command, not url",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"command\": \"x\",\n \"url\": \"https://h/mcp\"}}}",
            "mcp.json:2:2: mcpServers.a.url: both command and url: a server is either started (command) or reached at a URL (url)",
        ),
        (
            "{\"mcpServers\": {\n\n    \"a\": {\"args\": []}}}",
            "mcp.json:3:5: mcpServers.a: neither command nor url: a server is either started (command) or reached at a URL (url)",
        ),
        (
            "{\"mcpServers\": {\"my server\": {\"command\": \"x\"}}}",
            "mcp.json:1:17: mcpServers[\"my server\"]: the name cannot make tool names and resource URIs: it must start with a letter and hold only letters, digits, _ and -",
        ),
        (
            "{\"mcpServers\": {\"a_very_long_server_name\": {\"command\": \"x\"}}}",
            "mcp.json:1:17: mcpServers.a_very_long_server_name: the name cannot make tool names: 22 characters at most (or give a shorter \"prefix\" in its \"mcp-bridge\" options)",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"command\": \"x\", \"mcp-bridge\": {\"prefix\": \"a.\"}}}}",
            "mcp.json:1:64: mcpServers.a.mcp-bridge.prefix: the prefix cannot make tool names: it may hold only letters, digits, _ and -",
        ),
        (
            "{\"mcpServers\": {\"Files\": {\"command\": \"x\"},\n \"files\": {\"command\": \"y\"}}}",
            "mcp.json:2:2: mcpServers.files: the name makes the same resource URIs (files+...) as the server Files: rename one of them",
        ),
        (
            "{\"mcpServers\": {\"gh\": {\"command\": \"x\"},\n \"github\": {\"command\": \"y\", \"mcp-bridge\": {\"prefix\": \"gh__\"}}}}",
            "mcp.json:2:2: mcpServers.github: its tools and prompts would get the same names (gh__...) as those of the server gh: give one of them another \"prefix\"",
        ),
        (
            "{\"mcpServers\": {\"a\": {\"url\": \"https://h/mcp\",\n \"headers\": {\"Authorization\": \"Bearer ${env:API_TOKEN}\"}}}}",
            "mcp.json:2:31: mcpServers.a.headers.Authorization: the variable API_TOKEN is not set",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\", \"args\": [\"--key\", \"${input:key}\"]}}}",
            "mcp.json:1:54: servers.a.args[1]: ${input:key} is asked of the user by VS Code, which mcp-bridge cannot do: give the value with ${env:NAME}",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\", \"cwd\": \"${workspaceFolder}\"}}}",
            "mcp.json:1:43: servers.a.cwd: ${workspaceFolder} is a variable of the editor that mcp-bridge cannot resolve: give the value, or ${env:NAME}",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\", \"envFile\": \".env\"}}}",
            "mcp.json:1:36: servers.a.envFile: mcp-bridge does not read env files: give the variables in \"env\" (${env:NAME} takes one from the environment)",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\", \"args\": \"-v\"}}}",
            "mcp.json:1:44: servers.a.args: expected an array of strings",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": 5}}}",
            "mcp.json:1:31: servers.a.command: expected a string",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\", \"mcp-bridge\": {\"calltimeout\": 5}}}}",
            "mcp.json:1:51: servers.a.mcp-bridge.calltimeout: unknown option \"calltimeout\" (the options: enabled, prefix, discoverTimeout, listTimeout, readTimeout, callTimeout, inputTimeout, shutdownGrace, listenAckTimeout, allowTool, denyTool, allowPrompt, denyPrompt, allowResource, denyResource, clientId, clientIssuer, clientMetadataUrl, grant, signIn, redirectPort, account, tokenStore, tokenKeyFile, noBrowser, signInTimeout, authorizeParam)",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\", \"mcp-bridge\": {\"callTimeout\": -1}}}}",
            "mcp.json:1:66: servers.a.mcp-bridge.callTimeout: invalid value: expected seconds, at least 0.1 and at most 2592000",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\", \"mcp-bridge\": {\"callTimeout\": \"30\"}}}}",
            "mcp.json:1:66: servers.a.mcp-bridge.callTimeout: expected a number of seconds",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\", \"mcp-bridge\": {\"enabled\": \"no\"}}}}",
            "mcp.json:1:62: servers.a.mcp-bridge.enabled: expected true or false",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\", \"mcp-bridge\": {\"allowTool\": [\"ok\", \"a[\"]}}}}",
            "mcp.json:1:71: servers.a.mcp-bridge.allowTool[1]: invalid value: unclosed character class; missing ']'",
        ),
        (
            "{\"servers\": {\"a\": {\"url\": \"https://h/mcp\", \"mcp-bridge\": {\"grant\": \"password\"}}}}",
            "mcp.json:1:68: servers.a.mcp-bridge.grant: invalid value: expected authorization-code, client-credentials",
        ),
        (
            "{\"servers\": {\"a\": {\"url\": \"https://h/mcp\", \"mcp-bridge\": {\"authorizeParam\": {\"state\": \"1\"}}}}}",
            "mcp.json:1:78: servers.a.mcp-bridge.authorizeParam.state: invalid value: state is a parameter the bridge sets itself; it cannot be replaced",
        ),
        (
            "{\"servers\": {\"a\": {\"command\": \"x\", \"mcp-bridge\": {\"noBrowser\": true}}}}",
            "mcp.json:1:36: servers.a.mcp-bridge: the sign-in options apply only to a server at a URL",
        ),
        (
            "{\"servers\": {\"a\": {\"url\": \"https://h/mcp\", \"mcp-bridge\": {\"grant\": \"client-credentials\"}}}}",
            "mcp.json:1:44: servers.a.mcp-bridge: --grant client-credentials needs --client-id (and its secret in MCP_BRIDGE_CLIENT_SECRET)",
        ),
        (
            "{\"servers\": {\"a\": {\"url\": \"http://example.com/mcp?key=s3cret\"}}}",
            "mcp.json:1:27: servers.a.url: the URL uses http with a host that is not loopback: use https",
        ),
        (
            "{\"servers\": {\"a\": {\"url\": \"https://h/mcp\", \"headers\": {\"Mcp-Session-Id\": \"x\"}}}}",
            "mcp.json:1:56: servers.a.headers.Mcp-Session-Id: the header Mcp-Session-Id is set by the bridge or by HTTP and cannot be given",
        ),
        (
            "{\"servers\": {\"a\": {\"url\": \"https://h/mcp\", \"headers\": {\"X-Key\": \"a\\nb\"}}}}",
            "mcp.json:1:65: servers.a.headers.X-Key: the value of the header is not valid header text",
        ),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter(|(text, want)| error(text) != *want)
        .map(|(text, want)| format!("{text}\n  want: {want}\n   got: {}", error(text)))
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_client_secret_is_only_for_the_servers_that_name_a_client_id() {
    let secrets = EnvSecrets {
        client_secret: Some("s3cret".into()),
        token_key: None,
        ..EnvSecrets::default()
    };
    let text = r#"{"servers": {
        "plain": {"url": "https://a.example/mcp"},
        "ci": {"url": "https://b.example/mcp", "mcp-bridge": {"clientId": "ci"}}}}"#;
    let read = read("mcp.json", text, &mut env, &secrets).map(|c| c.servers.len());
    assert_eq!(
        read.map_err(|e| e.to_string()),
        Err("mcp.json:3:48: servers.ci.mcp-bridge: MCP_BRIDGE_CLIENT_SECRET needs --client-id and --client-issuer (the secret only goes to that issuer)".to_owned())
    );
}

#[test]
fn a_repeated_server_keeps_its_first_place_and_its_last_entry() {
    let c = config(
        r#"{"mcpServers": {"a": {"command": "one"}, "b": {"command": "two"}, "a": {"command": "three"}}}"#,
    );
    let got: Vec<(String, String)> = c
        .servers
        .iter()
        .map(|s| (s.name.clone(), child(s).0))
        .collect();
    assert_eq!(
        got,
        [
            ("a".to_owned(), "three".to_owned()),
            ("b".to_owned(), "two".to_owned())
        ]
    );
}

#[test]
fn a_file_that_cannot_be_read_is_told_in_the_os_words() {
    let missing = load(
        std::path::Path::new("/nonexistent/mcp.json"),
        &EnvSecrets::default(),
    );
    assert_eq!(
        missing.map(|_| ()).map_err(|e| e.to_string()),
        Err(
            "--config /nonexistent/mcp.json cannot be read: No such file or directory (os error 2)"
                .to_owned()
        )
    );
}
