//! The position tree: any YAML (or JSON) document read into nodes, each
//! mapping key, mapping value and sequence item with its line and column.

use super::{Position, position_of};
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// One node of the document: where it was written and what it holds.
#[derive(Debug, Default)]
pub(super) struct Node {
    pub(super) at: Option<Position>,
    pub(super) kind: Kind,
}

#[derive(Debug, Default)]
pub(super) enum Kind {
    #[default]
    Scalar,
    /// Entries with the key's position.
    Map(Vec<(String, Option<Position>, Node)>),
    Seq(Vec<Node>),
}

impl Node {
    pub(super) fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Map(entries) => entries.iter().find(|(k, _, _)| k == key).map(|e| &e.2),
            _ => None,
        }
    }

    pub(super) fn key_at(&self, key: &str) -> Option<Position> {
        match &self.kind {
            Kind::Map(entries) => entries.iter().find(|(k, _, _)| k == key).and_then(|e| e.1),
            _ => None,
        }
    }

    pub(super) fn item(&self, i: usize) -> Option<&Node> {
        match &self.kind {
            Kind::Seq(items) => items.get(i),
            _ => None,
        }
    }
}

pub(super) fn position_tree(text: &str) -> Option<Node> {
    let root: serde_saphyr::Spanned<Tree> = serde_saphyr::from_str(text).ok()?;
    let mut node = root.value.0;
    node.at = position_of(root.referenced);
    Some(node)
}

/// Deserializes any YAML into [`Node`]s, children with their positions.
struct Tree(Node);

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TreeVisitor).map(Tree)
    }
}

fn child(s: serde_saphyr::Spanned<Tree>) -> Node {
    let mut n = s.value.0;
    n.at = position_of(s.referenced);
    n
}

struct TreeVisitor;

macro_rules! scalars {
    ($($f:ident: $t:ty),*) => {
        $(fn $f<E: de::Error>(self, _: $t) -> Result<Node, E> { Ok(Node::default()) })*
    };
}

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    scalars!(visit_bool: bool, visit_i64: i64, visit_u64: u64, visit_i128: i128,
             visit_u128: u128, visit_f64: f64, visit_str: &str, visit_bytes: &[u8]);

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::default())
    }

    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::default())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        d.deserialize_any(TreeVisitor)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(s) = seq.next_element::<serde_saphyr::Spanned<Tree>>()? {
            items.push(child(s));
        }
        Ok(Node {
            at: None,
            kind: Kind::Seq(items),
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = map.next_key::<serde_saphyr::Spanned<Key>>()? {
            let v = map.next_value::<serde_saphyr::Spanned<Tree>>()?;
            entries.push((k.value.0, position_of(k.referenced), child(v)));
        }
        Ok(Node {
            at: None,
            kind: Kind::Map(entries),
        })
    }
}

/// A mapping key as text (scalars), or empty for a complex key.
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(KeyVisitor).map(Key)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        Ok(v.to_string())
    }
    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Ok(String::new())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<String, A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        Ok(String::new())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<String, A::Error> {
        while map
            .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
            .is_some()
        {}
        Ok(String::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_records_positions() {
        let t = position_tree("a: 1\nb:\n  - x\n  - { c: 2 }\n");
        let t = t.as_ref().and_then(|t| t.get("b")).and_then(|b| b.item(1));
        let c = t.and_then(|n| n.get("c")).and_then(|n| n.at);
        assert_eq!(
            c,
            Some(Position {
                line: 4,
                column: 10
            })
        );
    }
}
