//! The lists the gateway keeps of each server: fetched page by page when the server joins and
//! at each of its list changes (at most [`MAX_PAGES_PER_SERVER`] pages and
//! [`MAX_ITEMS_PER_SERVER`] items of one list), so that the editor's lists are answered from
//! them, and a list change reaches the editor only when a list really changed.

use serde_json::Value;

use crate::protocol::rules::list_items::ItemKind;

/// The most pages of one server's list that one fetch takes.
pub const MAX_PAGES_PER_SERVER: usize = 100;

/// The most items of one server's list that the gateway keeps.
pub const MAX_ITEMS_PER_SERVER: usize = 10_000;

/// The index of a kind in [`Kept`].
pub fn slot(kind: ItemKind) -> usize {
    match kind {
        ItemKind::Tool => 0,
        ItemKind::Prompt => 1,
        ItemKind::Resource => 2,
        ItemKind::ResourceTemplate => 3,
    }
}

/// The kinds that one list change of a server names: its tools, its prompts, or its
/// resources and their templates (2025-11-25 has one list change for both).
pub fn kinds_of_change(kind: ItemKind) -> &'static [ItemKind] {
    match kind {
        ItemKind::Tool => &[ItemKind::Tool],
        ItemKind::Prompt => &[ItemKind::Prompt],
        ItemKind::Resource | ItemKind::ResourceTemplate => {
            &[ItemKind::Resource, ItemKind::ResourceTemplate]
        }
    }
}

/// The lists kept of one run of a server, by [`slot`]: `None` until the first fetch is in.
#[derive(Default)]
pub struct Kept {
    /// The items of each kind, as the server names them.
    pub items: [Option<Vec<Value>>; 4],
    /// A fetch of the kind is in flight.
    pub fetching: [bool; 4],
    /// A list change came during the fetch: fetch again once it is in.
    pub again: [bool; 4],
    /// The list differs from the one the editor was told of: its list change is due once
    /// no fetch of its group is in flight.
    pub changed: [bool; 4],
}

/// One fetch of a server's list, in flight.
pub struct Fetch {
    /// The server's index.
    pub member: usize,
    /// Its run.
    pub generation: u64,
    /// What is fetched.
    pub kind: ItemKind,
    /// The items so far.
    pub items: Vec<Value>,
    /// The pages so far.
    pub pages: usize,
}

/// What to do after a page came.
#[derive(Debug, PartialEq)]
pub enum Next {
    /// Ask for the page at this cursor.
    Page(String),
    /// The list is whole (or at its bounds).
    Done,
}

impl Fetch {
    /// A fetch of the list of `kind` of the run `generation` of the server `member`.
    pub fn new(member: usize, generation: u64, kind: ItemKind) -> Fetch {
        Fetch {
            member,
            generation,
            kind,
            items: Vec::new(),
            pages: 0,
        }
    }

    /// A page came: its items are kept; says whether the next one is to be fetched.
    pub fn page(&mut self, mut result: Value) -> Next {
        self.pages += 1;
        if let Some(Value::Array(items)) = result.get_mut(self.kind.member()).map(Value::take) {
            let room = MAX_ITEMS_PER_SERVER.saturating_sub(self.items.len());
            self.items.extend(items.into_iter().take(room));
        }
        match result.get("nextCursor").and_then(Value::as_str) {
            Some(c)
                if self.pages < MAX_PAGES_PER_SERVER && self.items.len() < MAX_ITEMS_PER_SERVER =>
            {
                Next::Page(c.to_owned())
            }
            _ => Next::Done,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pages_are_followed_until_the_last() {
        let mut f = Fetch::new(0, 1, ItemKind::Tool);
        assert_eq!(
            f.page(json!({"tools": [{"name": "a"}], "nextCursor": "p2"})),
            Next::Page("p2".into())
        );
        assert_eq!(f.page(json!({"tools": [{"name": "b"}]})), Next::Done);
        assert_eq!(f.items, vec![json!({"name": "a"}), json!({"name": "b"})]);
    }

    #[test]
    fn the_pages_of_one_list_are_bounded() {
        let mut f = Fetch::new(0, 1, ItemKind::Prompt);
        for _ in 1..MAX_PAGES_PER_SERVER {
            assert_eq!(
                f.page(json!({"prompts": [], "nextCursor": "again"})),
                Next::Page("again".into())
            );
        }
        assert_eq!(
            f.page(json!({"prompts": [], "nextCursor": "again"})),
            Next::Done
        );
    }

    #[test]
    fn a_resource_change_names_the_resources_and_their_templates() {
        assert_eq!(
            kinds_of_change(ItemKind::Resource),
            &[ItemKind::Resource, ItemKind::ResourceTemplate]
        );
        assert_eq!(kinds_of_change(ItemKind::Tool), &[ItemKind::Tool]);
    }
}
