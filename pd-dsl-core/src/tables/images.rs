//! Versions and the vllm-ascend image table.

use super::*;

// ---------------------------------------------------------------------------
// Versions and images
// ---------------------------------------------------------------------------

/// A vllm-ascend version `vMAJOR.MINOR.PATCH[rcN]`, ordered so that an rc
/// sorts before its final release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Version {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
    /// Patch.
    pub patch: u32,
    /// Release candidate number; `None` for a final release.
    pub rc: Option<u32>,
}

impl Version {
    /// Parses `v0.21.0rc1`, `v0.23.0`, `0.9.1rc3`.
    pub fn parse(text: &str) -> Option<Version> {
        let t = text.strip_prefix('v').unwrap_or(text);
        let (nums, rc) = match t.find("rc") {
            Some(i) => (&t[..i], Some(t[i + 2..].parse().ok()?)),
            None => (t, None),
        };
        let mut it = nums.split('.');
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.parse().ok()?;
        let patch = it.next()?.parse().ok()?;
        if it.next().is_some() {
            return None;
        }
        Some(Version {
            major,
            minor,
            patch,
            rc,
        })
    }
}

impl Ord for Version {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(o.major, o.minor, o.patch))
            .then(match (self.rc, o.rc) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(a), Some(b)) => a.cmp(&b),
            })
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}.{}.{}", self.major, self.minor, self.patch)?;
        if let Some(rc) = self.rc {
            write!(f, "rc{rc}")?;
        }
        Ok(())
    }
}

/// Where `recompute_scheduler_enable` may be set (facts §4.2, §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecomputeRoles {
    /// v0.18.0 – v0.22.1rc1: P or D; a ValueError in PD-mixed mode
    /// (platform.py @v0.18.0 L461-468).
    PrefillOrDecode,
    /// v0.23.0rc1 and later: D only; ignored on P with a warning, ValueError
    /// when mixed (#11265, #11537; vllm_ascend/platform.py @v0.23.0rc1
    /// L679-692, @v0.26.0rc1 L676-694, @v0.27.1rc1 L1030-1047, @v0.30.0rc2
    /// L1108-1125).
    DecodeOnly,
}

/// One vllm-ascend image release: its tag and date, typed by hand (the
/// comment on a row names where the date comes from), plus the release's
/// generated facts ([`crate::upstream::Release`]), from which everything else
/// is derived ([`Image::vllm`], [`Image::cann`], [`Image::mooncake`],
/// [`Image::suffix`], [`Image::hybrid_connector`], [`Image::v1_hybrid_kv`],
/// [`Image::recompute`], [`Image::dsa_cp_checks_sp`],
/// [`Image::nested_scheduler_config`], [`Image::proxy_workers`], the
/// `additional_config` keys and env variables it reads).
///
/// `pd-dsl-core/tests/image_rows.rs` cross-checks the facts the rules read
/// against a plain text reading of the corpus.
#[derive(Debug)]
pub struct Image {
    /// The tag without hardware suffix, as layouts write it.
    pub tag: &'static str,
    /// Commit date of the tag.
    pub date: &'static str,
    /// The release's generated facts (`upstream/facts/vllm-ascend/`), parsed
    /// once by [`crate::upstream`].
    pub facts_json: &'static str,
}

impl Serialize for Image {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Image", 11)?;
        st.serialize_field("tag", self.tag)?;
        st.serialize_field("date", self.date)?;
        st.serialize_field("vllm", self.vllm())?;
        st.serialize_field("cann", self.cann())?;
        st.serialize_field("mooncake", self.mooncake())?;
        st.serialize_field("suffix_950dt", &self.suffix("950dt"))?;
        st.serialize_field("hybrid_connector", &self.hybrid_connector())?;
        st.serialize_field("v1_hybrid_kv", &self.v1_hybrid_kv())?;
        st.serialize_field("recompute", &self.recompute())?;
        st.serialize_field("nested_scheduler_config", &self.nested_scheduler_config())?;
        st.serialize_field("proxy_workers", &self.proxy_workers())?;
        st.end()
    }
}

/// One row of [`IMAGES`]: the release version once (the tag is `v` plus it,
/// and it names the facts file the row embeds), then its date; everything
/// else about the release is read from that generated facts file.
macro_rules! image {
    ($ver:literal, $date:literal) => {
        Image {
            tag: concat!("v", $ver),
            date: $date,
            facts_json: include_str!(concat!(
                "../../../upstream/facts/vllm-ascend/",
                $ver,
                ".json"
            )),
        }
    };
}

/// Every supported image, in version order (facts §7 dependency table, §9
/// release table). Release branches mean a later tag is not a superset of an
/// earlier one, so every feature is a field or a fact, never "tag >= x".
///
/// Adding a release: pin it in `upstream/corpus.lock.json`, run
/// `scripts/upstream/facts.py write` and add its row here, reviewed against the
/// paths the rows below cite; `pd-dsl-core/tests/image_rows.rs` fails until
/// the lock, the facts and this table name the same releases.
///
/// Dates up to v0.25.1rc1 are the tags' commit dates; from v0.26.0rc1 the
/// heading date of the release's entry in docs/source/user_guide/
/// release_notes.md, or, for a release without an entry (v0.28.0rc1,
/// v0.29.0rc1), the build date of its sdist's `PKG-INFO`.
pub static IMAGES: [Image; 15] = [
    image!("0.18.0", "2026-04-30"),
    image!("0.19.1rc1", "2026-04-30"),
    image!("0.20.2rc1", "2026-06-03"),
    image!("0.21.0rc1", "2026-06-12"),
    image!("0.22.1rc1", "2026-06-30"),
    image!("0.23.0rc1", "2026-07-19"),
    image!("0.23.0", "2026-08-17"),
    image!("0.24.0rc1", "2026-08-04"),
    image!("0.25.1rc1", "2026-08-19"),
    // release_notes.md "## v0.26.0rc1 - 2026.09.03".
    image!("0.26.0rc1", "2026-09-03"),
    // release_notes.md "## v0.27.1rc1 - 2026.09.24".
    image!("0.27.1rc1", "2026-09-24"),
    // No release_notes.md entry; PKG-INFO built 2026-10-09.
    image!("0.28.0rc1", "2026-10-09"),
    // No release_notes.md entry; PKG-INFO built 2026-10-09.
    image!("0.29.0rc1", "2026-10-09"),
    // release_notes.md "## v0.30.0rc1 - 2026.10.11".
    image!("0.30.0rc1", "2026-10-11"),
    // release_notes.md "## v0.30.0rc2 - 2026.10.13".
    image!("0.30.0rc2", "2026-10-13"),
];

/// Looks an image up by tag (without hardware suffix).
pub fn image(tag: &str) -> Option<&'static Image> {
    IMAGES.iter().find(|i| i.tag == tag)
}

impl Image {
    /// The parsed version of this image.
    pub fn version(&self) -> Version {
        // Every tag in IMAGES is a well-formed version; a test guards it.
        Version::parse(self.tag).unwrap_or(Version {
            major: 0,
            minor: 0,
            patch: 0,
            rc: None,
        })
    }

    /// The full image reference for a hardware kind, or `None` when this
    /// release pushes no image for it: the suffix the release's image
    /// workflow gives the hardware's Dockerfile (`image_suffixes` of the
    /// facts, from .github/workflows/schedule_image_build_and_push.yaml: A2
    /// none, A3 `-a3`, 950DT `-a5` where it is built at all).
    pub fn reference(&self, hw: &Hardware) -> Option<String> {
        let suffix = self.suffix(crate::upstream::image_key(hw))?;
        Some(format!("quay.io/ascend/vllm-ascend:{}{}", self.tag, suffix))
    }

    /// The tag suffix of the image pushed for hardware key `key` (`a2`, `a3`,
    /// `950dt`; the facts' `image_suffixes`), `None` when none is pushed.
    pub fn suffix(&self, key: &str) -> Option<&'static str> {
        self.facts()?.image_suffixes.get(key)
    }

    /// Mooncake version the A3 image installs (`ARG MOONCAKE_TAG` of
    /// Dockerfile.a3, in the facts).
    pub fn mooncake(&self) -> &'static str {
        self.facts()
            .and_then(|r| r.images.get("a3")?.as_ref()?.mooncake.as_deref())
            .unwrap_or("")
    }

    /// The release's generated facts (every row has them: a test guards it).
    pub fn facts(&self) -> Option<&'static crate::upstream::Release> {
        crate::upstream::release(self)
    }

    /// vLLM version the image installs (`ARG VLLM_TAG` of Dockerfile.a3, in
    /// the facts).
    pub fn vllm(&self) -> &'static str {
        self.facts().map_or("", |r| r.vllm.version.as_str())
    }

    /// CANN version of the image's base (the A3 Dockerfile's `FROM`, in the
    /// facts).
    pub fn cann(&self) -> &'static str {
        self.facts().and_then(|r| r.cann()).unwrap_or("")
    }

    /// `MooncakeHybridConnector` is registered (first in v0.20.2rc1, #9270;
    /// `kv_connectors` of the facts).
    pub fn hybrid_connector(&self) -> bool {
        self.facts()
            .is_some_and(|r| r.registers("MooncakeHybridConnector"))
    }

    /// `additional_config.scheduler_config` is read as a nested mapping
    /// (#12177, first in v0.25.1rc1; its `sub_keys` in the facts).
    pub fn nested_scheduler_config(&self) -> bool {
        self.facts()
            .and_then(|r| r.config_key("scheduler_config"))
            .is_some_and(|k| k.sub_keys.is_some())
    }

    /// The load-balance proxy has `--workers` (and `/reset_prefix_cache`,
    /// #9645, first in v0.21.0rc1; the script's flags in the facts).
    pub fn proxy_workers(&self) -> bool {
        self.facts()
            .is_some_and(|r| r.script_has_flag("load_balance_proxy_server_example.py", "--workers"))
    }

    /// Whether `enable_dsa_cp` on an indexer model without sequence
    /// parallelism is a `ValueError` at start-up: `utils.enable_dsa_cp()`
    /// raises "DSA CP requires SP to be enabled" (the facts'
    /// `dsa_cp_needs_sp`: vllm_ascend/utils.py @v0.20.2rc1 L1405 …
    /// @v0.26.0rc1 L1402). v0.18.0 and v0.19.1rc1 do not read the key (DSA
    /// CP follows SP alone); from v0.27.1rc1 `AscendConfig` decides it.
    pub fn dsa_cp_checks_sp(&self) -> bool {
        self.facts().is_some_and(|r| r.dsa_cp_needs_sp.is_some())
    }

    /// Whether `MooncakeConnectorV1` supports DeepSeek-V4 and hybrid KV
    /// (#10342; the facts' `v1_hybrid_kv`, `self.use_hybrid` in
    /// mooncake_connector.py, first in v0.22.1rc1).
    pub fn v1_hybrid_kv(&self) -> bool {
        self.facts().is_some_and(|r| r.v1_hybrid_kv.is_some())
    }

    /// Where the recompute scheduler may run: decode only where the
    /// platform turns it off on a PD prefill engine (the facts'
    /// `recompute_on_prefill` `ignored`, vllm_ascend/platform.py from
    /// v0.23.0rc1), else prefill or decode.
    pub fn recompute(&self) -> RecomputeRoles {
        match self.facts().and_then(|r| r.recompute_on_prefill.as_ref()) {
            Some(r) if r.prefill == "ignored" => RecomputeRoles::DecodeOnly,
            _ => RecomputeRoles::PrefillOrDecode,
        }
    }

    /// Whether this image reads top-level `additional_config` key `key`.
    pub fn reads_config_key(&self, key: &str) -> bool {
        self.facts().is_some_and(|r| r.config_key(key).is_some())
    }

    /// Whether vllm-ascend on this image reads environment variable `name`.
    pub fn reads_env(&self, name: &str) -> bool {
        self.facts().is_some_and(|r| r.reads_env(name))
    }
}
