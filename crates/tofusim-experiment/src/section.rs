//! A typed view of one TOML table that remembers which keys were read, so
//! unknown keys are reported (with the valid ones) instead of ignored.

use crate::error::{ConfigError, Result};
use crate::units;
use std::cell::RefCell;
use std::collections::BTreeSet;
use toml::Value;

/// The largest rate a key accepts, bytes per second (100 TB/s).
pub const MAX_RATE_BPS: f64 = 1e14;

pub struct Section<'a> {
    file: &'a str,
    path: String,
    table: &'a toml::Table,
    used: RefCell<BTreeSet<String>>,
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a datetime",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

impl<'a> Section<'a> {
    pub fn new(file: &'a str, path: &str, table: &'a toml::Table) -> Self {
        Self {
            file,
            path: path.to_string(),
            table,
            used: RefCell::new(BTreeSet::new()),
        }
    }

    pub fn file(&self) -> &'a str {
        self.file
    }

    /// The tables of the array `key` (e.g. `links = [{ ... }, { ... }]`),
    /// each a section named `key[i]`; `example` shows one in errors.
    pub fn tables(&self, key: &str, example: &str) -> Result<Vec<Section<'a>>> {
        let Some(v) = self.get(key) else { return Ok(Vec::new()) };
        let Value::Array(items) = v else {
            return Err(self.error(key, format!("expected an array of tables such as {example}")));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let k = format!("{key}[{i}]");
                match item {
                    Value::Table(t) => Ok(Section::new(self.file, &self.key_path(&k), t)),
                    _ => Err(self.error(&k, format!("expected a table such as {example}"))),
                }
            })
            .collect()
    }

    /// Dotted path of `key` in this section.
    pub fn key_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{}", self.path, key)
        }
    }

    pub fn error(&self, key: &str, expected: impl Into<String>) -> ConfigError {
        ConfigError::new(self.file, &self.key_path(key), expected)
    }

    pub fn has(&self, key: &str) -> bool {
        self.table.contains_key(key)
    }

    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.used.borrow_mut().insert(key.to_string());
        self.table.get(key)
    }

    fn wrong(&self, key: &str, want: &str, v: &Value) -> ConfigError {
        self.error(key, format!("expected {want}, found {}", type_name(v)))
    }

    pub fn string(&self, key: &str) -> Result<Option<String>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.wrong(key, "a string", v)),
        }
    }

    /// A string that must be one of `choices`.
    pub fn choice(&self, key: &str, choices: &[&str]) -> Result<Option<String>> {
        match self.string(key)? {
            None => Ok(None),
            Some(s) if choices.contains(&s.as_str()) => Ok(Some(s)),
            Some(s) => Err(self.error(
                key,
                format!("expected one of {}, found {s:?}", choices.join(", ")),
            )),
        }
    }

    pub fn boolean(&self, key: &str) -> Result<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Boolean(b)) => Ok(Some(*b)),
            Some(v) => Err(self.wrong(key, "true or false", v)),
        }
    }

    fn int_value(&self, key: &str, v: &Value, min: i64, max: i64) -> Result<i64> {
        match v {
            Value::Integer(i) if *i >= min && *i <= max => Ok(*i),
            Value::Integer(i) => Err(self.error(
                key,
                format!("expected an integer from {min} to {max}, found {i}"),
            )),
            v => Err(self.wrong(key, "an integer", v)),
        }
    }

    /// An integer in `min..=max`.
    pub fn int(&self, key: &str, min: i64, max: i64) -> Result<Option<i64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => self.int_value(key, v, min, max).map(Some),
        }
    }

    pub fn float(&self, key: &str, min: f64, max: f64) -> Result<Option<f64>> {
        let x = match self.get(key) {
            None => return Ok(None),
            Some(Value::Float(f)) => *f,
            Some(Value::Integer(i)) => *i as f64,
            Some(v) => return Err(self.wrong(key, "a number", v)),
        };
        if !(min..=max).contains(&x) {
            return Err(self.error(
                key,
                format!("expected a number from {min} to {max}, found {x}"),
            ));
        }
        Ok(Some(x))
    }

    /// A list of integers, each in `min..=max`.
    pub fn int_list(&self, key: &str, min: i64, max: i64) -> Result<Option<Vec<i64>>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| self.int_value(&format!("{key}[{i}]"), v, min, max))
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(v) => Err(self.wrong(key, "an array of integers", v)),
        }
    }

    /// A list of rows, each a list of integers in `min..=max`, of a length in `width`.
    pub fn int_rows(
        &self,
        key: &str,
        width: std::ops::RangeInclusive<usize>,
        min: i64,
        max: i64,
    ) -> Result<Option<Vec<Vec<i64>>>> {
        let Some(v) = self.get(key) else {
            return Ok(None);
        };
        let Value::Array(rows) = v else {
            return Err(self.wrong(key, "an array of rows", v));
        };
        let mut out = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            let k = format!("{key}[{i}]");
            match row {
                Value::Array(items) if width.contains(&items.len()) => out.push(
                    items
                        .iter()
                        .enumerate()
                        .map(|(j, x)| self.int_value(&format!("{k}[{j}]"), x, min, max))
                        .collect::<Result<Vec<_>>>()?,
                ),
                Value::Array(items) => {
                    return Err(self.error(
                        &k,
                        format!(
                            "expected {} to {} integers, found {}",
                            width.start(),
                            width.end(),
                            items.len()
                        ),
                    ))
                }
                v => {
                    return Err(self.wrong(
                        &k,
                        &format!("a row of {} to {} integers", width.start(), width.end()),
                        v,
                    ))
                }
            }
        }
        Ok(Some(out))
    }

    pub fn bool_list(&self, key: &str) -> Result<Option<Vec<bool>>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::Boolean(b) => Ok(*b),
                    v => Err(self.wrong(&format!("{key}[{i}]"), "true or false", v)),
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some(v) => Err(self.wrong(key, "an array of booleans", v)),
        }
    }

    /// A rate with units (`"5GB/s"`) or a bare number of bytes per second.
    pub fn rate(&self, key: &str) -> Result<Option<f64>> {
        let r = match self.get(key) {
            None => return Ok(None),
            Some(Value::String(s)) => {
                units::parse_rate(s).map_err(|e| self.error(key, format!("expected {e}")))?
            }
            Some(Value::Integer(i)) if *i >= 0 => *i as f64,
            Some(Value::Float(f)) if *f >= 0.0 => *f,
            Some(v) => return Err(self.wrong(key, "a rate such as \"5GB/s\"", v)),
        };
        if r <= 0.0 {
            return Err(self.error(key, "expected a positive rate"));
        }
        // Beyond any link built (a cycle would be shorter than 10⁻¹⁴ s):
        // a typo, not a network.
        if !r.is_finite() || r > MAX_RATE_BPS {
            return Err(self.error(key, "expected at most 100TB/s"));
        }
        if r < 1.0 {
            return Err(self.error(key, "expected at least 1 byte per second"));
        }
        Ok(Some(r))
    }

    /// A size with units (`"1KiB"`) or a bare number of bytes.
    pub fn size(&self, key: &str) -> Result<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => units::parse_size(s)
                .map(Some)
                .map_err(|e| self.error(key, format!("expected {e}"))),
            Some(Value::Integer(i)) if *i >= 0 => Ok(Some(*i as f64)),
            Some(v) => Err(self.wrong(key, "a size such as \"1KiB\"", v)),
        }
    }

    pub fn table(&self, key: &str) -> Result<Option<Section<'a>>> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Table(t)) => Ok(Some(Section::new(self.file, &self.key_path(key), t))),
            Some(v) => Err(self.wrong(key, "a table", v)),
        }
    }

    /// Fails on the first key that was never read, listing the keys that
    /// are valid here: those the parser looked up (present or not) and
    /// `valid`, the ones it reads elsewhere.
    pub fn finish(&self, valid: &[&str]) -> Result<()> {
        let used = self.used.borrow();
        for k in self.table.keys() {
            if !used.contains(k) && !valid.contains(&k.as_str()) {
                let mut known: Vec<&str> = valid.iter().copied().chain(used.iter().map(String::as_str)).collect();
                known.sort_unstable();
                known.dedup();
                return Err(self.error(
                    k,
                    format!("unknown key; valid keys here are: {}", known.join(", ")),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_key_is_refused_with_the_keys_that_are_valid() {
        let doc: toml::Table = toml::from_str("[router]\nvcs = 3\nescape = \"bubble\"\n").unwrap();
        let top = Section::new("f.toml", "", &doc);
        let router = top.table("router").unwrap().unwrap();
        let _ = router.get("escape");
        let _ = router.get("dynamic_vcs");
        // "escape" both looked up and read elsewhere: listed once.
        let e = router.finish(&["paths", "escape"]).unwrap_err();
        assert_eq!(e.key, "router.vcs");
        assert!(e.to_string().ends_with("valid keys here are: dynamic_vcs, escape, paths"), "{e}");
    }
}
