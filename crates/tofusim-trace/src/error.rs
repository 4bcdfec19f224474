//! Why a trace cannot be read or replayed. Every message names the trace
//! (its path) and, where there is one, the rank and call.

/// A trace that cannot be read, or replayed as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// The archive cannot be found, opened or read as OTF2.
    #[error("{0}")]
    Archive(String),
    /// The archive reads, but holds what tofusim does not replay
    /// faithfully: a call it does not model, a truncated call, a
    /// communicator it does not define, mismatched collectives.
    #[error("{0}")]
    Content(String),
    /// A collective algorithm asked for (`--coll OP=ALGO`) that the
    /// operation does not have.
    #[error("{0}")]
    Algorithm(String),
}
