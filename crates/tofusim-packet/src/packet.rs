//! Packets live in a pool indexed by `u32` (no per-packet allocation in
//! steady state) and are chained into queues through `next`.

pub const NONE: u32 = u32::MAX;

pub mod flags {
    pub const LIVE: u8 = 1;
    pub const PRIORITY: u8 = 2;
    /// Has crossed the dateline of the ring it is in (dateline escape).
    pub const CROSSED: u8 = 4;
    /// Created after the warm-up: counts in the latency statistics.
    pub const MEASURED: u8 = 8;
    /// A deposit (broadcast) packet: every router on its way keeps a copy.
    pub const DEPOSIT: u8 = 16;
    /// Its adaptive route is chosen when it leaves the node's send queue
    /// for an injection FIFO (it reaches the source router), from the
    /// queues then: not when the software posted it.
    pub const ROUTE_AT_ENTRY: u8 = 32;
    /// Routed deterministically whatever the routing mode: its route
    /// avoids a failure that adaptive hops could wander onto (BG/L's
    /// per-packet routing-mode bit).
    pub const DETERMINISTIC: u8 = 64;
    /// No route around the network's failures reaches its destination:
    /// it stays in its node's send queue (the run stops with an
    /// `unroutable` error at the end of the window).
    pub const UNROUTABLE: u8 = 128;
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub next: u32,
    pub src: u32,
    pub dst: u32,
    pub serial: u32,
    pub created: u64,
    pub tag: u32,
    pub checksum: u32,
    /// Bytes on the router (n × 32).
    pub bytes: u16,
    pub payload: u16,
    pub hops: u16,
    /// Hint bits (per axis: set = `−`).
    pub hints: u8,
    /// A first hop chosen at the source to avoid a failure: port + 1, 0
    /// for none ([`tofusim_routing::SourceRoute::detour`]).
    pub detour: u8,
    /// VC at the current router (FIFO index when in an injection FIFO).
    pub vc: u8,
    /// Input unit at the current router (ports, then injection FIFOs).
    pub input: u16,
    /// Tokens (chunks) charged for it in the buffer it occupies.
    pub charged: u8,
    pub flags: u8,
    /// Route at the current router, computed once on arrival: minimal
    /// ports (bit per port) and the escape port (`AT_DESTINATION` there).
    pub route_mask: u16,
    pub route_escape: u8,
}

impl Packet {
    /// The route its source chose: route state and first-hop detour.
    #[inline]
    pub fn set_route(&mut self, route: tofusim_routing::SourceRoute) {
        self.hints = route.hints;
        self.detour = route.detour.map_or(0, |p| p + 1);
    }
}

/// `route_escape` of a packet that has reached its destination.
pub const AT_DESTINATION: u8 = u8::MAX;

/// The checksum a packet must still carry at delivery.
pub fn checksum(serial: u32, src: u32, dst: u32, tag: u32, payload: u16) -> u32 {
    let mut x = (serial as u64) << 32
        ^ (src as u64) << 16
        ^ dst as u64
        ^ (tag as u64) << 40
        ^ (payload as u64) << 24;
    x = (x ^ (x >> 33)).wrapping_mul(0xff51afd7ed558ccd);
    x = (x ^ (x >> 33)).wrapping_mul(0xc4ceb9fe1a85ec53);
    (x ^ (x >> 33)) as u32
}

/// Appends `pkt` to the intrusive list `(head, tail)`.
#[inline]
pub fn list_push(pool: &mut Pool, head: &mut u32, tail: &mut u32, pkt: u32) {
    pool.get_mut(pkt).next = NONE;
    if *tail == NONE {
        *head = pkt;
    } else {
        pool.get_mut(*tail).next = pkt;
    }
    *tail = pkt;
}

/// Removes and returns the first packet of the non-empty list `(head, tail)`.
#[inline]
pub fn list_pop(pool: &Pool, head: &mut u32, tail: &mut u32) -> u32 {
    let h = *head;
    debug_assert_ne!(h, NONE);
    *head = pool.get(h).next;
    if *head == NONE {
        *tail = NONE;
    }
    h
}

/// Items in one arena, addressed by `u32`, with the freed slots reused
/// (no allocation in steady state): packets, and the send queues' messages
/// and pieces.
#[derive(Clone, Debug)]
pub(crate) struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab { items: Vec::new(), free: Vec::new() }
    }
}

impl<T> Slab<T> {
    /// Stores `x` in a free slot (or a new one); returns its index.
    pub fn insert(&mut self, x: T) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = x;
                i
            }
            None => {
                self.items.push(x);
                (self.items.len() - 1) as u32
            }
        }
    }

    /// Slot `i` may be reused (its item stays until then).
    pub fn free(&mut self, i: u32) {
        self.free.push(i);
    }

    /// Every slot, freed or not.
    pub fn slots(&self) -> &[T] {
        &self.items
    }
}

impl<T> std::ops::Index<u32> for Slab<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: u32) -> &T {
        &self.items[i as usize]
    }
}

impl<T> std::ops::IndexMut<u32> for Slab<T> {
    #[inline]
    fn index_mut(&mut self, i: u32) -> &mut T {
        &mut self.items[i as usize]
    }
}

#[derive(Default)]
pub struct Pool {
    slots: Slab<Packet>,
    live: u64,
}

impl Pool {
    pub fn alloc(&mut self, p: Packet) -> u32 {
        self.live += 1;
        self.slots.insert(p)
    }

    pub fn release(&mut self, i: u32) {
        self.slots[i].flags &= !flags::LIVE;
        self.slots.free(i);
        self.live -= 1;
    }

    #[inline]
    pub(crate) fn prefetch(&self, i: u32) {
        crate::prefetch::line(self.slots.slots(), i as usize);
    }

    #[inline]
    pub fn get(&self, i: u32) -> &Packet {
        &self.slots[i]
    }

    #[inline]
    pub fn get_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.slots[i]
    }

    pub fn live(&self) -> u64 {
        self.live
    }

    pub fn iter_live(&self) -> impl Iterator<Item = (u32, &Packet)> {
        self.slots
            .slots()
            .iter()
            .enumerate()
            .filter(|(_, p)| p.flags & flags::LIVE != 0)
            .map(|(i, p)| (i as u32, p))
    }
}
