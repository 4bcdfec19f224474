//! A trace as read: per rank, its MPI calls in program order, each with
//! the records that say what it did.

use std::collections::BTreeMap;

/// One record of an MPI call (peers are world ranks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// A message sent (`request` set when non-blocking).
    Send { peer: u32, comm: u32, tag: u32, bytes: u64, request: Option<u64> },
    /// A message received, with the source and tag it matched (`request`
    /// set when it completes a non-blocking receive).
    Recv { peer: u32, comm: u32, tag: u32, bytes: u64, request: Option<u64> },
    /// A non-blocking receive posted (its message is known at completion).
    Posted(u64),
    /// A non-blocking send completed.
    SendDone(u64),
    /// A request completed as cancelled.
    Cancelled(u64),
    /// A collective: OTF2's operation code, communicator, root within it,
    /// bytes this rank's buffers send and receive.
    Collective { op: u8, comm: u32, root: Option<u32>, sent: u64, received: u64 },
}

/// One MPI call of one rank: its name (index into [`Trace::names`]), when it
/// was entered and left (ns from the trace's start), its records
/// (`records` of them from `first_record` in the rank's record list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    pub name: u32,
    pub enter_ns: u64,
    pub leave_ns: u64,
    pub first_record: u32,
    pub records: u32,
}

#[derive(Clone, Debug)]
pub struct Trace {
    /// The archive's directory.
    pub path: String,
    pub ranks: u32,
    /// Communicator -> its members as world ranks (index = rank in it);
    /// `None`: MPI_COMM_SELF (the calling rank alone).
    pub comms: BTreeMap<u32, Option<Vec<u32>>>,
    pub comm_names: BTreeMap<u32, String>,
    /// Call names (MPI regions).
    pub names: Vec<String>,
    pub calls: Vec<Vec<Call>>,
    pub records: Vec<Vec<Record>>,
}

impl Trace {
    pub fn name(&self, c: &Call) -> &str {
        &self.names[c.name as usize]
    }

    /// The records of call `c` of rank `r`.
    pub fn records_of(&self, r: usize, c: &Call) -> &[Record] {
        &self.records[r][c.first_record as usize..(c.first_record + c.records) as usize]
    }

    /// The members of communicator `comm` as seen by rank `r`.
    pub fn members(&self, comm: u32, r: u32) -> Vec<u32> {
        match self.comms.get(&comm) {
            Some(Some(m)) => m.clone(),
            _ => vec![r],
        }
    }

    pub fn comm_name(&self, comm: u32) -> String {
        self.comm_names.get(&comm).cloned().unwrap_or_else(|| comm.to_string())
    }

    /// When rank `r`'s program starts: its leaving MPI_Init (or first call).
    pub fn start_ns(&self, r: usize) -> u64 {
        let cs = &self.calls[r];
        cs.iter().find(|c| self.name(c).starts_with("MPI_Init")).map_or_else(|| cs.first().map_or(0, |c| c.enter_ns), |c| c.leave_ns)
    }

    /// The program's measured time: from the last rank leaving MPI_Init to
    /// the last rank leaving its last call (MPI_Finalize).
    pub fn measured_ns(&self) -> u64 {
        let start = (0..self.ranks as usize).map(|r| self.start_ns(r)).max().unwrap_or(0);
        let end = self.calls.iter().map(|cs| cs.last().map_or(0, |c| c.leave_ns)).max().unwrap_or(0);
        end.saturating_sub(start)
    }
}

/// OTF2's collective operations by code (OTF2_CollectiveOp).
pub fn collective_name(op: u8) -> &'static str {
    const NAMES: [&str; 23] = [
        "barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw",
        "allreduce", "reduce", "reduce_scatter", "scan", "exscan", "reduce_scatter_block", "create_handle", "destroy_handle", "allocate",
        "deallocate", "create_handle_and_allocate", "destroy_handle_and_deallocate",
    ];
    NAMES.get(op as usize).copied().unwrap_or("unknown")
}
