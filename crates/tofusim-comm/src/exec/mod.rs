//! Every executor of a [`Schedule`](crate::Schedule), side by side (DESIGN.md
//! principle 2: one definition, several executors):
//! - [`data`]: real buffers, the result checked element by element;
//! - [`packet`]: the packet engine, through its [`tofusim_packet::Traffic`]
//!   boundary (host overheads, TNIs as send lanes, reductions and copies
//!   timed on the host).
//!
//! The flow-model and lockstep-rounds executors and the real-MPI one (the
//! Python front end) time the same schedules from the experiment layer.

pub mod data;
pub mod packet;
