//! The engine's events. Whole-packet events (not per chunk), each
//! addressed to one router (or, for the node kinds, one node); the table
//! of what each does and when is in the engine's module page.

/// What an event does (the enum is its own registry; one byte in the wheel).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EvKind {
    /// The header reaches the next router: packet `x` joins VC `b` of input `a`.
    Arrive,
    /// The tail of a packet left input unit `a` (VC `b`): `x` chunks free.
    Done,
    /// `x` tokens of VC `b` return to output `a`.
    Token,
    /// Packet `x` from input unit `a` (VC `b`) is in the reception FIFO.
    Deliver,
    /// An open-loop packet is created at node `router`.
    Inject,
    /// Packet `x` joins lane `a` of node `router`.
    Release,
    /// Trace row `x` enters the send queue of node `router`.
    Trace,
    /// Node `router`'s host interface is free again (or, with link errors,
    /// a link of its router that was stopped takes packets again).
    Wake,
    /// The retransmission time-out of output `a` of router `router`.
    LinkTimeout,
    /// Failures or recoveries of the schedule are due (applied before the
    /// cycle's other events; the event only stops the loop there).
    Fault,
    /// Packet `x`, lost on a failed link, is back at its source node
    /// (whose router is `router`) to be sent again.
    Resend,
}

impl EvKind {
    const ALL: [EvKind; 11] = [
        Self::Arrive,
        Self::Done,
        Self::Token,
        Self::Deliver,
        Self::Inject,
        Self::Release,
        Self::Trace,
        Self::Wake,
        Self::LinkTimeout,
        Self::Fault,
        Self::Resend,
    ];

    /// The kind encoded as `kind as u8` (events crossing partitions).
    pub fn from_u8(k: u8) -> Self {
        Self::ALL[k as usize]
    }
}

/// One event: its kind and three operands whose meaning the kind gives.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ev {
    pub kind: EvKind,
    pub b: u8,
    /// An input port or input unit (FIFOs are numbered after the ports).
    pub a: u16,
    pub router: u32,
    pub x: u32,
}
