//! # tofusim-comm
//!
//! The communication layer's one definition of a collective: a
//! [`Schedule`] — per rank, a small program of sends, receives (plain or
//! reducing) and local copies, each with the steps it depends on and the
//! network interface (TNI) a send uses. Algorithms ([`algorithms`]) build
//! schedules; executors run them ([`exec`]): the data executor moves real
//! buffers and checks the result, the packet executor times them on the
//! packet engine, and
//! the Python front end runs them on real MPI ranks. The regular
//! algorithms also have a compact lockstep form ([`rounds`]) for the flow
//! model at full-machine scale.
//!
//! Buffers are counted in *elements* of [`ELEMENT_BYTES`] bytes (a double,
//! or a 64-bit integer in the data executor, where sums wrap so that every
//! reduction order gives the same bits).

pub mod algorithms;
pub mod barrier_hw;
pub mod chakra;
pub mod collective;
pub mod hierarchical;
pub mod library;
pub mod exec;
pub mod goal;
pub mod mpi;
pub mod mpi_collectives;
pub mod replay;
pub mod rounds;
pub mod schedule;
pub mod subcommunicators;
pub mod tree;

pub use algorithms::{Algorithm, BuildError, Params};
pub use collective::{Collective, Operation};
pub use rounds::{Rounds, Stream};
pub use exec::data::{execute, DataError, Outcome};
pub use exec::packet::{HostTiming, ScheduleRun};
pub use schedule::{Action, Combine, InvalidSchedule, Program, Rank, Schedule, Span, Step, StepId};

/// Bytes per buffer element.
pub const ELEMENT_BYTES: u64 = 8;
