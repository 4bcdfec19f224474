//! Every executor of a [`Schedule`](crate::Schedule), side by side (docs/architecture.md
//! principle 2: one definition, several executors):
//! - [`data`]: real buffers, the result checked element by element;
//! - [`packet`]: the packet engine, through its [`tofusim_packet::Traffic`]
//!   boundary (host overheads, TNIs as send lanes, reductions and copies
//!   timed on the host);
//! - [`flow`]: the flow model (crate `tofusim-flow`), each message a flow
//!   sharing bandwidth max-min fairly, with the packet executor's latency
//!   terms;
//! - [`rounds`]: the flow model on a collective's lockstep rounds
//!   ([`crate::Rounds`]), for machines too large to list the schedule;
//! - [`lockstep`]: the flow model on several jobs' schedules taken as
//!   rounds by depth, side by side (a job mix on a full machine).
//!
//! The real-MPI executor (the Python front end, mpi4py) runs the same
//! schedules on real ranks. The experiment layer builds the machine each
//! executor needs (`tofusim_experiment::build`).

pub mod critical_path;
pub mod data;
pub mod flow;
pub mod lockstep;
pub mod packet;
pub mod rounds;
