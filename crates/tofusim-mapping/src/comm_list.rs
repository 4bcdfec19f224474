//! A communication list: RMATT's input ([S:003]), one line per
//! source rank, destination rank and total bytes sent over the run.
//!
//! Text format: `SRC DST BYTES` per line (whitespace or commas between),
//! `#` starts a comment; an optional `# ranks N` line fixes the process
//! count (otherwise the largest rank + 1).

use std::fmt::Write as _;

/// Bytes one rank sends another over a whole run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flow {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
}

/// The flows of a job, merged per (source, destination) and sorted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommList {
    pub ranks: u32,
    pub flows: Vec<Flow>,
}

/// A line of a communication list that is not `SRC DST BYTES`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number.
    pub line: usize,
    pub message: String,
}

impl CommList {
    /// Merges flows with the same source and destination; drops zero-byte
    /// and self flows (they cost nothing on any mapping).
    pub fn new(ranks: u32, flows: impl IntoIterator<Item = Flow>) -> Self {
        let mut v: Vec<Flow> = flows
            .into_iter()
            .filter(|f| f.bytes > 0 && f.src != f.dst)
            .collect();
        v.sort_by_key(|f| (f.src, f.dst));
        let mut merged: Vec<Flow> = Vec::with_capacity(v.len());
        for f in v {
            match merged.last_mut() {
                Some(m) if m.src == f.src && m.dst == f.dst => m.bytes += f.bytes,
                _ => merged.push(f),
            }
        }
        Self {
            ranks,
            flows: merged,
        }
    }

    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut declared: Option<u32> = None;
        let mut flows = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let err = |message: String| ParseError { line, message };
            let (body, comment) = match raw.find('#') {
                Some(k) => (&raw[..k], Some(raw[k + 1..].trim())),
                None => (raw, None),
            };
            if let Some(c) = comment {
                if let Some(n) = c.strip_prefix("ranks") {
                    declared = Some(n.trim().parse().map_err(|_| {
                        err(format!("`# ranks` expects a process count, got {:?}", clip(n.trim())))
                    })?);
                }
            }
            let fields: Vec<&str> = body
                .split(|c: char| c.is_whitespace() || c == ',')
                .filter(|f| !f.is_empty())
                .collect();
            if fields.is_empty() {
                continue;
            }
            if fields.len() != 3 {
                return Err(err(format!(
                    "expected `SRC DST BYTES`, got {} field(s)",
                    fields.len()
                )));
            }
            let num = |k: usize, what: &str| -> Result<u64, ParseError> {
                fields[k].parse::<u64>().map_err(|_| {
                    err(format!(
                        "{what} must be a non-negative integer, got {:?}",
                        clip(fields[k])
                    ))
                })
            };
            let (src, dst, bytes) = (num(0, "SRC")?, num(1, "DST")?, num(2, "BYTES")?);
            if src > u32::MAX as u64 / 2 || dst > u32::MAX as u64 / 2 {
                return Err(err("rank out of range".into()));
            }
            flows.push(Flow {
                src: src as u32,
                dst: dst as u32,
                bytes,
            });
        }
        let largest = flows.iter().map(|f| f.src.max(f.dst) + 1).max().unwrap_or(0);
        let ranks = match declared {
            Some(n) if n < largest => {
                return Err(ParseError {
                    line: 0,
                    message: format!("`# ranks {n}` but rank {} appears", largest - 1),
                })
            }
            Some(n) => n,
            None => largest,
        };
        if ranks == 0 {
            return Err(ParseError { line: 0, message: "no flows (and no `# ranks N`): the list is empty".into() });
        }
        Ok(Self::new(ranks, flows))
    }

    pub fn to_text(&self) -> String {
        let mut s = format!("# ranks {}\n# src dst bytes\n", self.ranks);
        for f in &self.flows {
            let _ = writeln!(s, "{} {} {}", f.src, f.dst, f.bytes);
        }
        s
    }

    pub fn total_bytes(&self) -> u64 {
        self.flows.iter().map(|f| f.bytes).sum()
    }
}

/// At most 40 characters of a field, for error messages (a line may be
/// megabytes long).
fn clip(s: &str) -> String {
    if s.chars().count() <= 40 {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(39).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_merges_and_round_trips() {
        let l = CommList::parse("# ranks 4\n0 1 10\n0,1,5 # again\n2 3 7\n3 3 9\n\n").unwrap();
        assert_eq!(l.ranks, 4);
        assert_eq!(
            l.flows,
            vec![
                Flow { src: 0, dst: 1, bytes: 15 },
                Flow { src: 2, dst: 3, bytes: 7 }
            ]
        );
        assert_eq!(CommList::parse(&l.to_text()).unwrap(), l);
    }

    #[test]
    fn bad_lines_name_the_line() {
        let e = CommList::parse("0 1 10\n0 1\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = CommList::parse("0 x 10\n").unwrap_err();
        assert!(e.message.contains("DST"));
        assert!(CommList::parse("# ranks 2\n0 5 1\n").is_err());
    }

    #[test]
    fn an_empty_list_is_refused_and_long_fields_are_clipped() {
        assert!(CommList::parse("").unwrap_err().message.contains("empty"));
        assert!(CommList::parse("# only comments\n\n").is_err());
        // A list that declares its ranks but has no flows is a silent job.
        assert_eq!(CommList::parse("# ranks 8\n").unwrap().ranks, 8);
        let long = format!("0 1 {}\n", "9x".repeat(100_000));
        assert!(CommList::parse(&long).unwrap_err().message.len() < 120);
    }
}
