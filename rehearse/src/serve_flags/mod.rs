//! `vllm serve`'s flags at one vLLM version, from the generated table
//! `upstream/facts/vllm/<version>.json` ([`crate::facts`]; nothing here is
//! typed by hand), parsed the way vLLM's `FlexibleArgumentParser` does
//! (`vllm/utils/argparse_utils.py`, `parse_args`): `_` and `-` are
//! interchangeable between `--` and the first `.`, `--flag=value` works,
//! `--no-NAME` exists only for a `BooleanOptionalAction` (negatable) flag,
//! aliases (`-tp`) are the table's, `-O3`/`-O=3`/`-O 3` mean
//! `--optimization-level 3`, and JSON flags take dotted sub-keys
//! (`--compilation-config.cudagraph_mode FULL`, `--x.key+ a,b` for a list).
//! Anything else is refused naming the flag and the vLLM version. Stricter
//! than argparse in one respect: an unambiguous prefix of a long flag
//! (argparse's `allow_abbrev`) is refused too, since a generated script
//! spells every flag in full.

use crate::facts::{self, ServeFlag};
use serde_json::Value as Json;
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

mod argv;
#[cfg(test)]
#[allow(clippy::panic)]
mod tests;

pub use argv::parse;
/// How a flag consumes argv (the table's `kind`).
pub use pd_dsl::upstream::FlagKind as Kind;

/// The flags of one vLLM version, indexed by every spelling.
#[derive(Debug)]
pub struct Flags {
    /// The vLLM version.
    pub version: String,
    flags: Vec<ServeFlag>,
    /// `--name`, `--no-name`, `-tp`, … → (index into `flags`, negated).
    index: HashMap<String, (usize, bool)>,
    /// Options whose choices the image's vllm-ascend widens, by name.
    widened: BTreeMap<String, &'static pd_dsl::upstream::WidenedChoices>,
}

impl Flags {
    /// Builds the index of a parsed table ([`ServeFlag::spellings`]).
    pub fn new(version: &str, flags: Vec<ServeFlag>) -> Flags {
        let mut index = HashMap::new();
        for (i, f) in flags.iter().enumerate() {
            for (spelling, negated) in f.spellings() {
                index.insert(spelling, (i, negated));
            }
        }
        Flags {
            version: version.to_owned(),
            flags,
            index,
            widened: BTreeMap::new(),
        }
    }

    /// Parses a table's JSON text (`upstream/facts/vllm/<v>.json`).
    pub fn from_json(text: &str) -> Result<Flags, String> {
        let f: facts::VllmRelease =
            serde_json::from_str(text).map_err(|e| format!("a vllm fact table: {e}"))?;
        Ok(Flags::new(&f.version, f.serve_flags))
    }

    /// The table of vLLM `version` (embedded, parsed once).
    pub fn of_version(version: &str) -> Result<&'static Flags, String> {
        static TABLES: LazyLock<BTreeMap<&'static str, Result<Flags, String>>> =
            LazyLock::new(|| {
                facts::vllm_versions()
                    .into_iter()
                    .map(|v| {
                        let t =
                            facts::vllm(v).map(|f| Flags::new(&f.version, f.serve_flags.clone()));
                        (v, t)
                    })
                    .collect()
            });
        match TABLES.get(version) {
            Some(Ok(t)) => Ok(t),
            Some(Err(e)) => Err(e.clone()),
            None => Err(facts::vllm(version).err().unwrap_or_default()),
        }
    }

    /// The `vllm serve` of image `tag`: its vLLM's table, with the choices
    /// its vllm-ascend widens (facts `parser_choices_widened`).
    pub fn of_image(tag: &str) -> Result<&'static Flags, String> {
        static TABLES: LazyLock<BTreeMap<&'static str, Result<Flags, String>>> =
            LazyLock::new(|| {
                pd_dsl::tables::IMAGES
                    .iter()
                    .map(|img| {
                        let t = facts::ascend_required(img.tag).and_then(|rel| {
                            let v = &rel.vllm.version;
                            let f = facts::vllm(v)
                                .map_err(|e| format!("image `{}` ships vLLM {v}: {e}", img.tag))?;
                            let mut flags = Flags::new(&f.version, f.serve_flags.clone());
                            flags.widened = rel
                                .parser_choices_widened
                                .iter()
                                .map(|w| (w.flag.clone(), w))
                                .collect();
                            Ok(flags)
                        });
                        (img.tag, t)
                    })
                    .collect()
            });
        match TABLES.get(tag) {
            Some(Ok(t)) => Ok(t),
            Some(Err(e)) => Err(e.clone()),
            None => Err(facts::ascend_required(tag).err().unwrap_or_default()),
        }
    }

    /// Every flag, sorted by name.
    pub fn flags(&self) -> &[ServeFlag] {
        &self.flags
    }

    /// The flag spelled `spelling` (`--max-model-len`, `--no-x`, `-tp`) and
    /// whether that spelling negates it.
    pub fn lookup(&self, spelling: &str) -> Option<(&ServeFlag, bool)> {
        self.index
            .get(spelling)
            .and_then(|&(i, neg)| self.flags.get(i).map(|f| (f, neg)))
    }

    /// What argparse says of `word` given to `flag`
    /// ([`ServeFlag::value_refusal`]): its `type=` conversion, and its
    /// choices with what the image's platform hook appends to them (not
    /// judged where that is not known).
    pub fn value_refusal(&self, flag: &ServeFlag, word: &str) -> Option<String> {
        let widened = self.widened.get(&flag.name).copied();
        flag.value_refusal(word, pd_dsl::upstream::extra_choices(widened))
    }

    /// What pydantic says when vLLM builds its config from the parsed
    /// `args`: a value argparse took for an option whose `CacheConfig` field
    /// the image's platform patch narrows to its own `Literal`
    /// ([`pd_dsl::upstream::WidenedChoices::field_refusal`]).
    pub fn field_refusal(&self, args: &ServeArgs) -> Option<String> {
        self.widened.iter().find_map(|(name, w)| {
            let value = args.value(name)?;
            w.field_refusal(value)
                .map(|why| format!("1 validation error for CacheConfig (--{name} {value}): {why}"))
        })
    }
}

/// Parsed `vllm serve` argv.
#[derive(Clone, Debug, Default)]
pub struct ServeArgs {
    /// The positional model path (or `--model`).
    pub model: Option<String>,
    /// Value flags: every occurrence, in order (the last wins).
    pub values: BTreeMap<String, Vec<String>>,
    /// Switches.
    pub switches: BTreeMap<String, bool>,
    /// JSON flags, parsed; dotted sub-keys merged in.
    pub json: BTreeMap<String, Json>,
}

impl ServeArgs {
    /// Last value of a value flag (the first of a `Many` flag's last group is not kept separately).
    pub fn value(&self, name: &str) -> Option<&str> {
        self.values
            .get(name)
            .and_then(|v| v.last())
            .map(String::as_str)
    }

    /// Whether a switch is on.
    pub fn switch(&self, name: &str) -> bool {
        self.switches.get(name).copied().unwrap_or(false)
    }

    /// An integer flag, `Ok(None)` when absent.
    pub fn int(&self, name: &str) -> Result<Option<i64>, String> {
        match self.value(name) {
            None => Ok(None),
            Some(v) => v
                .parse()
                .map(Some)
                .map_err(|_| format!("argument --{name}: invalid int value: '{v}'")),
        }
    }

    /// A port flag.
    pub fn port(&self, name: &str) -> Result<Option<u16>, String> {
        match self.int(name)? {
            None => Ok(None),
            Some(p) => u16::try_from(p)
                .map(Some)
                .map_err(|_| format!("argument --{name}: port out of range: {p}")),
        }
    }

    /// A JSON flag's value.
    pub fn json(&self, name: &str) -> Option<&Json> {
        self.json.get(name)
    }
}
