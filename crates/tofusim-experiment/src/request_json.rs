//! The keys the Python API hands a front door as JSON, read one way: a
//! missing or null key takes the command's default, a value of the wrong
//! kind is refused naming the key. Shared by the collective, benchmark
//! and given-schedule requests.

use serde_json::Value;

use crate::error::{ConfigError, Result};
use crate::rank_placement::{RankPlacement, Ranks};

/// A request's JSON object.
pub struct Fields(Value);

impl Fields {
    pub fn parse(spec: &str) -> Result<Fields> {
        serde_json::from_str(spec).map(Fields).map_err(|e| ConfigError::named(format!("bad spec: {e}")))
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }

    /// A string (empty when absent).
    pub fn text(&self, key: &str) -> String {
        self.0.get(key).and_then(|x| x.as_str()).unwrap_or_default().to_string()
    }

    /// A flag (false when absent).
    /// The MPI library `library` names (`None`: absent or empty).
    pub fn library(&self) -> Result<Option<tofusim_comm::library::Library>> {
        match self.text("library").as_str() {
            "" => Ok(None),
            name => crate::generation::parse_library(name).map(Some),
        }
    }

    pub fn flag(&self, key: &str) -> bool {
        self.0.get(key).and_then(|x| x.as_bool()).unwrap_or(false)
    }

    /// A whole number ≥ 0, `default` when absent (a `-1` must not become the default).
    pub fn whole(&self, key: &str, default: u64) -> Result<u64> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(default),
            Some(x) => x.as_u64().ok_or_else(|| ConfigError::argument(key, format!("expected a whole number of at least 0, found {x}"))),
        }
    }

    /// The packet engine's time budget: minutes, `"none"` for no limit;
    /// absent: the default hour.
    pub fn max_minutes(&self) -> Result<Option<f64>> {
        match self.0.get("max_minutes") {
            None | Some(Value::Null) => Ok(Some(tofusim_packet::budget::DEFAULT_MAX_MINUTES)),
            Some(Value::String(x)) if x == "none" => Ok(None),
            Some(x) => match x.as_f64() {
                Some(m) if m >= 0.0 => Ok(Some(m)),
                _ => Err(ConfigError::argument("max-time", format!("expected minutes of at least 0 or none, found {x}"))),
            },
        }
    }

    /// Ranks per node (`ppn`) and their placement: `placement` by name,
    /// or `rank_map`, a node id per rank.
    pub fn ranks(&self) -> Result<Ranks> {
        let placement = match self.0.get("rank_map") {
            None | Some(Value::Null) => RankPlacement::parse(&self.text("placement"))?,
            Some(Value::Array(a)) => RankPlacement::Map(
                a.iter()
                    .map(|x| x.as_u64().and_then(|n| u32::try_from(n).ok()))
                    .collect::<Option<Vec<u32>>>()
                    .ok_or_else(|| ConfigError::argument("placement", "expected a node id (a whole number) per rank"))?,
            ),
            Some(_) => return Err(ConfigError::argument("placement", "expected a list of node ids, one per rank")),
        };
        Ranks::new(self.whole("ppn", 1)?, placement)
    }
}
