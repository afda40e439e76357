//! The names that an editor sees of the items of many servers behind one bridge: tools and
//! prompts are always `{server}__{name}` (or `{prefix}{name}` with a server's own prefix),
//! resource URIs and templates `{server}+{uri}`, each within what clients accept, with an exact
//! reverse map back to the upstream's own name. Owns the rules and the table; never reads a
//! list or a file.
//!
//! Gateways that added a prefix only when a second server appeared renamed their users' tools,
//! and gateways that used `:`, `/` or `.` as the separator saw clients refuse every name: the
//! prefix here is always there, and the separator `__` is in the set every client accepts.

use std::collections::HashMap;

use super::list_items::ItemKind;

/// The longest tool name that Claude's API and Windsurf accept: a tool name must match
/// `^[a-zA-Z0-9_-]{1,64}$`.
pub const CLIENT_NAME_MAX_CHARS: usize = 64;

/// The room left in [`CLIENT_NAME_MAX_CHARS`] for a client's own prefix. Claude Code sends an
/// MCP tool to the API as `mcp__{entry}__{tool}` ({entry}: the name of the editor's entry that
/// runs the bridge), and the API refuses the whole name over 64 characters: 18 characters hold
/// `mcp__`, `__` and an entry name of up to 11 characters (`mcp-bridge`, `gateway`).
pub const CLIENT_PREFIX_ROOM_CHARS: usize = 18;

/// The longest name the bridge exposes (46 characters).
pub const EXPOSED_NAME_MAX_CHARS: usize = CLIENT_NAME_MAX_CHARS - CLIENT_PREFIX_ROOM_CHARS;

/// The characters of the hash that ends a shortened name (hexadecimal digits).
pub const HASH_SUFFIX_CHARS: usize = 8;

/// The longest prefix: a shortened name keeps its prefix and at least 13 characters of the
/// upstream's name before `_` and the hash.
pub const PREFIX_MAX_CHARS: usize = 24;

/// What ends the default prefix `{server}__`.
pub const SERVER_SEPARATOR: &str = "__";

/// What joins a server and a resource URI, `{server}+{uri}`: agentgateway's form. `+` is a
/// character of a URI scheme (RFC 3986 §3.1), so the result is a URI with the scheme
/// `{server}+{scheme}`.
pub const URI_SEPARATOR: char = '+';

/// FNV-1a's 64-bit offset basis (draft-eastlake-fnv, §6): the hash of a shortened name is the
/// same on every run and machine, unlike a seeded hasher's.
const FNV_OFFSET_BASIS_64: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a's 64-bit prime (draft-eastlake-fnv, §6).
const FNV_PRIME_64: u64 = 0x0000_0100_0000_01b3;

/// Why a server's name or prefix cannot make the names the editor sees.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The server's name is not a letter followed by letters, digits, `_` and `-`: it makes
    /// both the tool names and the scheme of the resource URIs (RFC 3986 §3.1: a scheme starts
    /// with a letter).
    #[error(
        "the name cannot make tool names and resource URIs: it must start with a letter and hold only letters, digits, _ and -"
    )]
    ServerName,
    /// The default prefix `{server}__` is over [`PREFIX_MAX_CHARS`].
    #[error(
        "the name cannot make tool names: {server_max} characters at most (or give a shorter \"prefix\" in its \"mcp-bridge\" options)",
        server_max = PREFIX_MAX_CHARS - SERVER_SEPARATOR.len()
    )]
    ServerNameTooLong,
    /// A prefix with a character that no tool name may hold.
    #[error("the prefix cannot make tool names: it may hold only letters, digits, _ and -")]
    PrefixCharacters,
    /// A prefix over [`PREFIX_MAX_CHARS`].
    #[error("the prefix cannot make tool names: {PREFIX_MAX_CHARS} characters at most")]
    PrefixTooLong,
}

/// The names of one server: the prefix of its tools and prompts and the scheme part of its
/// resource URIs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Namespace {
    /// The server's name (the key of its entry).
    pub server: String,
    /// The prefix of its tools and prompts: `{server}__` unless it has its own.
    pub prefix: String,
    /// What comes before `+` in its resource URIs: the name in lower case (the canonical case
    /// of a scheme, RFC 3986 §3.1, which a client may apply) with `-` for `_` (not a scheme
    /// character).
    pub uri_token: String,
}

/// Whether `c` is a character of the tool names every client accepts.
fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Whether `text` is a URI scheme (RFC 3986 §3.1: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`).
fn is_scheme(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// The names of the server `server`, with its own `prefix` if it has one. Errors:
/// [`NameError`].
pub fn namespace(server: &str, prefix: Option<&str>) -> Result<Namespace, NameError> {
    if !server.starts_with(|c: char| c.is_ascii_alphabetic()) || !server.chars().all(name_char) {
        return Err(NameError::ServerName);
    }
    let prefix = match prefix {
        Some(p) if !p.chars().all(name_char) => return Err(NameError::PrefixCharacters),
        Some(p) if p.len() > PREFIX_MAX_CHARS => return Err(NameError::PrefixTooLong),
        Some(p) => p.to_owned(),
        None if server.len() + SERVER_SEPARATOR.len() > PREFIX_MAX_CHARS => {
            return Err(NameError::ServerNameTooLong);
        }
        None => format!("{server}{SERVER_SEPARATOR}"),
    };
    Ok(Namespace {
        server: server.to_owned(),
        prefix,
        uri_token: server.to_ascii_lowercase().replace('_', "-"),
    })
}

/// How an exposed name differs from `{prefix}{name}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameChange {
    /// It is exactly `{prefix}{name}`.
    None,
    /// Each character no client accepts became `_` (an empty name became the hash of it).
    Sanitized,
    /// It was longer than [`EXPOSED_NAME_MAX_CHARS`]: cut, then `_` and the hash of the
    /// upstream's name.
    Shortened,
}

impl NameChange {
    /// The word of doctor's report: `sanitized`, `shortened`, or `unchanged`.
    pub fn word(self) -> &'static str {
        match self {
            NameChange::None => "unchanged",
            NameChange::Sanitized => "sanitized",
            NameChange::Shortened => "shortened",
        }
    }
}

/// A name (or URI) as the editor sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exposed {
    /// The name (or URI).
    pub name: String,
    /// How it differs from the plain form.
    pub change: NameChange,
}

/// The hash of `text` (FNV-1a 64, its halves folded into 32 bits), as [`HASH_SUFFIX_CHARS`]
/// lower-case hexadecimal digits: the same on every run and machine.
pub fn stable_hash(text: &str) -> String {
    let hash = text.bytes().fold(FNV_OFFSET_BASIS_64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(FNV_PRIME_64)
    });
    format!("{:08x}", (hash ^ (hash >> 32)) as u32)
}

/// The tool or prompt name the editor sees of the upstream's `original` under `prefix` (at
/// most [`PREFIX_MAX_CHARS`] characters of the name set): each character outside
/// `[a-zA-Z0-9_-]` becomes `_`; a name longer than [`EXPOSED_NAME_MAX_CHARS`] is cut and ends
/// with `_` and the [`stable_hash`] of `original`, so two names that are cut alike still
/// differ.
pub fn expose_name(prefix: &str, original: &str) -> Exposed {
    let sanitized: String = original
        .chars()
        .map(|c| if name_char(c) { c } else { '_' })
        .collect();
    let full = format!("{prefix}{sanitized}");
    if sanitized.is_empty() {
        return Exposed {
            name: format!("{prefix}{}", stable_hash(original)),
            change: NameChange::Sanitized,
        };
    }
    // Every character is ASCII now: a byte is a character.
    if full.len() <= EXPOSED_NAME_MAX_CHARS {
        let change = match sanitized == original {
            true => NameChange::None,
            false => NameChange::Sanitized,
        };
        return Exposed { name: full, change };
    }
    let keep = EXPOSED_NAME_MAX_CHARS - 1 - HASH_SUFFIX_CHARS;
    Exposed {
        name: format!("{}_{}", &full[..keep], stable_hash(original)),
        change: NameChange::Shortened,
    }
}

/// The URI the editor sees of the upstream's resource `uri` (or the text of a resource
/// template's `uriTemplate`) under the server's `uri_token`: `{uri_token}+{uri}`, a URI with
/// the scheme `{uri_token}+{scheme}`. `None` when `uri` does not start with a scheme and `:`
/// (a template whose scheme is a variable, a relative reference): no such URI can be told
/// apart by its owner.
pub fn expose_uri(uri_token: &str, uri: &str) -> Option<String> {
    let (scheme, _) = uri.split_once(':')?;
    is_scheme(scheme).then(|| format!("{uri_token}{URI_SEPARATOR}{uri}"))
}

/// An exposed URI split into its server's token (lower case) and the upstream's URI, or
/// `None` when it is not of the form [`expose_uri`] makes.
fn split_uri(exposed: &str) -> Option<(String, &str)> {
    let (token, original) = exposed.split_once(URI_SEPARATOR)?;
    let (scheme, _) = original.split_once(':')?;
    is_scheme(scheme).then(|| (token.to_ascii_lowercase(), original))
}

/// What two servers' names have in common that makes their items' names the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClashKind {
    /// The same [`Namespace::uri_token`] (`GitHub` and `github`, `my_files` and `my-files`):
    /// their resource URIs could not be told apart.
    UriToken,
    /// The same [`Namespace::prefix`] (two servers given one `prefix`, or a `prefix` that is
    /// another server's `{server}__`): every tool or prompt name they share would be one
    /// exposed name, which no list can know before it comes.
    Prefix,
}

/// Two servers whose namespaces clash ([`ClashKind`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenClash {
    /// What they share.
    pub kind: ClashKind,
    /// The token, or the prefix.
    pub token: String,
    /// The index of the first server.
    pub first: usize,
    /// The index of the second one.
    pub second: usize,
}

impl TokenClash {
    /// What the second server's items would share with the first's, for a warning:
    /// `its resources' URIs` or `its tools' and prompts' names`.
    pub fn what(&self) -> &'static str {
        match self.kind {
            ClashKind::UriToken => "its resources' URIs",
            ClashKind::Prefix => "its tools' and prompts' names",
        }
    }
}

/// How `space` clashes with `other`, if it does.
fn clash(space: &Namespace, other: &Namespace) -> Option<(ClashKind, String)> {
    if other.uri_token == space.uri_token {
        Some((ClashKind::UriToken, space.uri_token.clone()))
    } else if other.prefix == space.prefix {
        Some((ClashKind::Prefix, space.prefix.clone()))
    } else {
        None
    }
}

/// The owner of an exposed name: its server's index, and the upstream's own name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// The server's index in the table.
    pub server: usize,
    /// The name (or URI) the upstream gave.
    pub original: String,
}

/// Why an item gets no exposed name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NameRefused {
    /// Another item already has the exposed name: that item's owner.
    Clash {
        /// The exposed name.
        exposed: String,
        /// The item that had it first.
        first: Owner,
    },
    /// A resource URI or template that does not start with a scheme ([`expose_uri`]).
    NoScheme,
}

/// The exposed names of every server's items, and the exact way back from each to its owner.
#[derive(Clone, Debug, Default)]
pub struct NameTable {
    /// The servers by index; `None` for one that left (its index is never reused).
    spaces: Vec<Option<Namespace>>,
    tools: HashMap<String, Owner>,
    prompts: HashMap<String, Owner>,
}

impl NameTable {
    /// The table of the servers `spaces` (a server is its index here), with no item yet.
    /// Errors: [`TokenClash`], the first two servers whose URI tokens or prefixes are the
    /// same.
    pub fn new(spaces: Vec<Namespace>) -> Result<NameTable, TokenClash> {
        for (second, space) in spaces.iter().enumerate() {
            if let Some((first, (kind, token))) = spaces[..second]
                .iter()
                .enumerate()
                .find_map(|(i, s)| clash(space, s).map(|c| (i, c)))
            {
                return Err(TokenClash {
                    kind,
                    token,
                    first,
                    second,
                });
            }
        }
        Ok(NameTable {
            spaces: spaces.into_iter().map(Some).collect(),
            ..NameTable::default()
        })
    }

    /// Gives the server `server` the names of `space`: a server that joins (the next index)
    /// or one whose entry changed (its items' names are forgotten, and given again as they
    /// are listed). Errors: [`TokenClash`] with another server's URI token or prefix; the
    /// table is unchanged then.
    pub fn set_space(&mut self, server: usize, space: Namespace) -> Result<(), TokenClash> {
        let found = self.spaces.iter().enumerate().find_map(|(i, s)| {
            let other = s.as_ref().filter(|_| i != server)?;
            clash(&space, other).map(|c| (i, c))
        });
        if let Some((first, (kind, token))) = found {
            return Err(TokenClash {
                kind,
                token,
                first,
                second: server,
            });
        }
        self.forget(server);
        if server >= self.spaces.len() {
            self.spaces.resize(server + 1, None);
        }
        self.spaces[server] = Some(space);
        Ok(())
    }

    /// The server `server` left: its names no longer resolve.
    pub fn remove_space(&mut self, server: usize) {
        self.forget(server);
        if let Some(s) = self.spaces.get_mut(server) {
            *s = None;
        }
    }

    /// Forgets the names of the items of `server`.
    fn forget(&mut self, server: usize) {
        self.tools.retain(|_, o| o.server != server);
        self.prompts.retain(|_, o| o.server != server);
    }

    /// Gives the item `original` of kind `kind` of the server `server` its exposed name, and
    /// keeps the way back. The same item again gets the same name; a `server` the table does
    /// not have gets an empty prefix and token. Errors: [`NameRefused`].
    pub fn insert(
        &mut self,
        server: usize,
        kind: ItemKind,
        original: &str,
    ) -> Result<Exposed, NameRefused> {
        let space = self.spaces.get(server).and_then(Option::as_ref);
        let exposed = match kind {
            ItemKind::Tool | ItemKind::Prompt => {
                expose_name(space.map_or("", |s| s.prefix.as_str()), original)
            }
            ItemKind::Resource | ItemKind::ResourceTemplate => {
                let token = space.map_or("", |s| s.uri_token.as_str());
                let name = expose_uri(token, original).ok_or(NameRefused::NoScheme)?;
                let change = match space.is_some_and(|s| s.uri_token == s.server) {
                    true => NameChange::None,
                    false => NameChange::Sanitized,
                };
                Exposed { name, change }
            }
        };
        let owner = Owner {
            server,
            original: original.to_owned(),
        };
        match self.resolve(kind, &exposed.name) {
            Some(first) if first != owner => Err(NameRefused::Clash {
                exposed: exposed.name,
                first,
            }),
            Some(_) => Ok(exposed),
            None => {
                if let Some(map) = self.names_mut(kind) {
                    map.insert(exposed.name.clone(), owner);
                }
                Ok(exposed)
            }
        }
    }

    /// The owner of the exposed name (or URI) `exposed` of kind `kind`: the tools and prompts
    /// that [`NameTable::insert`] gave a name, and any URI of the form `{token}+{uri}` whose
    /// token is a server's (also one read through a template, which no list names; the token
    /// in any case).
    pub fn resolve(&self, kind: ItemKind, exposed: &str) -> Option<Owner> {
        match kind {
            ItemKind::Tool => self.tools.get(exposed).cloned(),
            ItemKind::Prompt => self.prompts.get(exposed).cloned(),
            ItemKind::Resource | ItemKind::ResourceTemplate => {
                let (token, original) = split_uri(exposed)?;
                let server = self
                    .spaces
                    .iter()
                    .position(|s| s.as_ref().is_some_and(|s| s.uri_token == token))?;
                Some(Owner {
                    server,
                    original: original.to_owned(),
                })
            }
        }
    }

    /// The map of the named kinds (tools, prompts); `None` for the URI kinds, whose way back
    /// is their form.
    fn names_mut(&mut self, kind: ItemKind) -> Option<&mut HashMap<String, Owner>> {
        match kind {
            ItemKind::Tool => Some(&mut self.tools),
            ItemKind::Prompt => Some(&mut self.prompts),
            ItemKind::Resource | ItemKind::ResourceTemplate => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space(server: &str) -> Namespace {
        match namespace(server, None) {
            Ok(s) => s,
            Err(e) => panic!("{server}: {e}"),
        }
    }

    #[test]
    fn a_server_that_leaves_or_changes_takes_its_names_with_it() {
        let mut t = NameTable::new(vec![space("files"), space("git")]).unwrap_or_default();
        let _ = t.insert(0, ItemKind::Tool, "read");
        let _ = t.insert(1, ItemKind::Tool, "log");
        t.remove_space(1);
        assert_eq!(t.resolve(ItemKind::Tool, "git__log"), None);
        assert_eq!(t.resolve(ItemKind::Resource, "git+git://HEAD"), None);
        assert_eq!(
            t.resolve(ItemKind::Tool, "files__read").map(|o| o.server),
            Some(0)
        );
        // The name comes back under a new index; a clash with a present token is refused.
        assert_eq!(t.set_space(2, space("git")), Ok(()));
        assert_eq!(
            t.resolve(ItemKind::Resource, "git+git://HEAD")
                .map(|o| o.server),
            Some(2)
        );
        assert_eq!(
            t.set_space(3, space("Files")),
            Err(TokenClash {
                kind: ClashKind::UriToken,
                token: "files".into(),
                first: 0,
                second: 3
            })
        );
        // A changed entry forgets its items' names until they are listed again.
        assert_eq!(t.set_space(0, space("files")), Ok(()));
        assert_eq!(t.resolve(ItemKind::Tool, "files__read"), None);
    }

    #[test]
    fn the_budget_leaves_room_for_claude_codes_prefix_of_an_entry_named_mcp_bridge() {
        assert_eq!(EXPOSED_NAME_MAX_CHARS, 46);
        let claude_code = format!("mcp__mcp-bridge__{}", "x".repeat(EXPOSED_NAME_MAX_CHARS));
        assert_eq!(claude_code.len(), 63);
    }

    #[test]
    fn the_hash_is_fnv_1a_64_folded_to_32_bits() {
        // FNV-1a 64 of "" is the offset basis, of "a" 0xaf63dc4c8601ec8c.
        assert_eq!(stable_hash(""), "4fd0bfc1");
        assert_eq!(stable_hash("a"), "296230c0");
        assert_eq!(stable_hash(&"a".repeat(70)), "d83db239");
    }

    #[test]
    fn a_server_name_makes_the_prefix_and_the_uri_token() {
        assert_eq!(
            namespace("My_Files", None),
            Ok(Namespace {
                server: "My_Files".into(),
                prefix: "My_Files__".into(),
                uri_token: "my-files".into(),
            })
        );
        assert_eq!(
            namespace("gh", Some("")).map(|s| s.prefix),
            Ok(String::new())
        );
        assert_eq!(
            namespace("gh", Some("git-")).map(|s| s.prefix),
            Ok("git-".to_string())
        );
        for bad in ["", "1password", "my server", "files.local", "_x", "ünï"] {
            assert_eq!(namespace(bad, None), Err(NameError::ServerName), "{bad}");
        }
        assert_eq!(
            namespace(&"a".repeat(23), None),
            Err(NameError::ServerNameTooLong)
        );
        assert!(namespace(&"a".repeat(22), None).is_ok());
        assert!(namespace(&"a".repeat(40), Some("long_")).is_ok());
        assert_eq!(
            namespace("gh", Some("g:")),
            Err(NameError::PrefixCharacters)
        );
        assert_eq!(
            namespace("gh", Some(&"p".repeat(25))),
            Err(NameError::PrefixTooLong)
        );
    }

    #[test]
    fn the_errors_say_what_a_name_must_be() {
        assert_eq!(
            NameError::ServerNameTooLong.to_string(),
            "the name cannot make tool names: 22 characters at most (or give a shorter \"prefix\" in its \"mcp-bridge\" options)"
        );
        assert_eq!(
            NameError::PrefixTooLong.to_string(),
            "the prefix cannot make tool names: 24 characters at most"
        );
    }

    #[test]
    fn names_are_sanitized_and_long_ones_shortened_with_the_hash_of_the_original() {
        let plain = expose_name("files__", "read_file");
        assert_eq!(
            plain,
            Exposed {
                name: "files__read_file".into(),
                change: NameChange::None
            }
        );
        assert_eq!(
            expose_name("files__", "fs:read.file/v2"),
            Exposed {
                name: "files__fs_read_file_v2".into(),
                change: NameChange::Sanitized
            }
        );
        assert_eq!(
            expose_name("p__", "é").name,
            "p___",
            "one character, one underscore"
        );
        let long = "a".repeat(70);
        let shortened = expose_name("files__", &long);
        assert_eq!(
            shortened,
            Exposed {
                name: format!("files__{}_{}", "a".repeat(30), stable_hash(&long)),
                change: NameChange::Shortened
            }
        );
        assert_eq!(shortened.name.len(), EXPOSED_NAME_MAX_CHARS);
        // Exactly the budget stays whole; one more is cut.
        let fits = "b".repeat(EXPOSED_NAME_MAX_CHARS - 7);
        assert_eq!(expose_name("files__", &fits).change, NameChange::None);
        let over = "b".repeat(EXPOSED_NAME_MAX_CHARS - 6);
        assert_eq!(expose_name("files__", &over).change, NameChange::Shortened);
        assert_eq!(
            expose_name("x__", ""),
            Exposed {
                name: format!("x__{}", stable_hash("")),
                change: NameChange::Sanitized
            }
        );
    }

    #[test]
    fn uris_get_the_server_before_their_scheme_and_need_one() {
        assert_eq!(
            expose_uri("files", "file:///tmp/a.txt").as_deref(),
            Some("files+file:///tmp/a.txt")
        );
        assert_eq!(
            expose_uri("gh", "git+ssh://h/r{?ref}").as_deref(),
            Some("gh+git+ssh://h/r{?ref}")
        );
        for bad in ["readme", "{scheme}://x", "1x:y", "/a:b", ":x"] {
            assert_eq!(expose_uri("files", bad), None, "{bad}");
        }
    }

    #[test]
    fn the_table_resolves_every_name_back_to_its_owner_and_refuses_a_clash() {
        let mut t = match NameTable::new(vec![space("files"), space("Git_Hub")]) {
            Ok(t) => t,
            Err(e) => panic!("{e:?}"),
        };
        let a = t.insert(0, ItemKind::Tool, "read.file");
        assert_eq!(a.map(|e| e.name), Ok("files__read_file".to_string()));
        // The same item again is no clash.
        assert!(t.insert(0, ItemKind::Tool, "read.file").is_ok());
        assert_eq!(
            t.insert(0, ItemKind::Tool, "read_file"),
            Err(NameRefused::Clash {
                exposed: "files__read_file".into(),
                first: Owner {
                    server: 0,
                    original: "read.file".into()
                }
            })
        );
        // Tools and prompts are apart.
        assert!(t.insert(0, ItemKind::Prompt, "read_file").is_ok());
        assert_eq!(
            t.resolve(ItemKind::Tool, "files__read_file"),
            Some(Owner {
                server: 0,
                original: "read.file".into()
            })
        );
        assert_eq!(t.resolve(ItemKind::Tool, "files__nothing"), None);
        let uri = t.insert(1, ItemKind::Resource, "repo://o/r");
        assert_eq!(
            uri,
            Ok(Exposed {
                name: "git-hub+repo://o/r".into(),
                change: NameChange::Sanitized
            })
        );
        assert_eq!(
            t.insert(1, ItemKind::ResourceTemplate, "{+x}"),
            Err(NameRefused::NoScheme)
        );
        // A URI read through a template, with the scheme in upper case as a client may send it.
        assert_eq!(
            t.resolve(ItemKind::Resource, "GIT-HUB+repo://o/r/issues/1"),
            Some(Owner {
                server: 1,
                original: "repo://o/r/issues/1".into()
            })
        );
        assert_eq!(t.resolve(ItemKind::Resource, "other+repo://o/r"), None);
        assert_eq!(t.resolve(ItemKind::Resource, "files:x"), None);
    }

    #[test]
    fn two_servers_with_one_uri_token_are_refused() {
        let clash = NameTable::new(vec![space("a"), space("my_files"), space("My-Files")]);
        assert_eq!(
            clash.map(|_| ()),
            Err(TokenClash {
                kind: ClashKind::UriToken,
                token: "my-files".into(),
                first: 1,
                second: 2
            })
        );
    }

    #[test]
    fn two_servers_with_one_prefix_are_refused_at_once_and_at_a_change() {
        let gh = |prefix: &str| namespace("github", Some(prefix)).unwrap();
        let clash = NameTable::new(vec![
            space("gl"),
            namespace("gh", None).unwrap(),
            gh("gh__"),
        ]);
        assert_eq!(
            clash.map(|_| ()),
            Err(TokenClash {
                kind: ClashKind::Prefix,
                token: "gh__".into(),
                first: 1,
                second: 2
            })
        );
        let mut t = NameTable::new(vec![space("gl"), gh("code_")]).unwrap();
        assert_eq!(
            t.set_space(2, namespace("gitea", Some("code_")).unwrap()),
            Err(TokenClash {
                kind: ClashKind::Prefix,
                token: "code_".into(),
                first: 1,
                second: 2
            })
        );
        // The server itself may keep its prefix when its entry changes.
        assert_eq!(t.set_space(1, gh("code_")), Ok(()));
        let prefix = TokenClash {
            kind: ClashKind::Prefix,
            token: "code_".into(),
            first: 1,
            second: 2,
        };
        assert_eq!(prefix.what(), "its tools' and prompts' names");
    }

    /// Every name of any text is one that clients accept, the same at each call, and the table
    /// leads back to it exactly; every URI with a scheme round-trips.
    #[test]
    fn every_exposed_name_is_valid_and_resolves_back_exactly() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let server = "[a-zA-Z][a-zA-Z0-9_-]{0,21}";
        let original = prop_oneof![
            3 => "[a-zA-Z0-9_.:/ -]{0,90}",
            1 => any::<String>(),
        ];
        let mut runner = TestRunner::new(Config {
            cases: 2048,
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&(server, original), |(server, original)| {
            let Ok(space) = namespace(&server, None) else {
                return Err(TestCaseError::fail(format!("{server} refused")));
            };
            let exposed = expose_name(&space.prefix, &original);
            prop_assert!(
                (1..=EXPOSED_NAME_MAX_CHARS).contains(&exposed.name.len())
                    && exposed.name.chars().all(name_char),
                "{:?}",
                exposed
            );
            prop_assert!(exposed.name.starts_with(&space.prefix));
            prop_assert_eq!(&expose_name(&space.prefix, &original), &exposed);
            let Ok(mut table) = NameTable::new(vec![space.clone()]) else {
                return Err(TestCaseError::fail("one server"));
            };
            prop_assert_eq!(
                table.insert(0, ItemKind::Tool, &original),
                Ok(exposed.clone())
            );
            prop_assert_eq!(
                table.resolve(ItemKind::Tool, &exposed.name),
                Some(Owner {
                    server: 0,
                    original: original.clone()
                })
            );
            let uri = format!("x-{}:{original}", space.uri_token);
            let Some(exposed_uri) = expose_uri(&space.uri_token, &uri) else {
                return Err(TestCaseError::fail("a URI with a scheme"));
            };
            prop_assert!(split_uri(&exposed_uri).is_some_and(|(_, rest)| rest == uri));
            prop_assert_eq!(
                table.resolve(ItemKind::Resource, &exposed_uri),
                Some(Owner {
                    server: 0,
                    original: uri
                })
            );
            Ok(())
        });
        assert!(result.is_ok(), "{result:?}");
    }
}
