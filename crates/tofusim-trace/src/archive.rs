//! Reading an OTF2 archive into per-rank call lists ([`Trace`]), through
//! OTF2's C reader (`ffi`). Only the standard records are read, so a trace
//! from any writer that uses them (tofusim's tracer, Score-P, OTF2's own
//! Python bindings) reads the same way:
//!
//! - ranks are the location groups of type *process*, in id order; a
//!   rank's MPI events are those of its first location (the master thread);
//! - an MPI call is an Enter/Leave pair of a region of the MPI paradigm (or
//!   named `MPI_*`) at the outermost level; between two calls is compute;
//! - the MPI records inside a call say what it did ([`Record`]);
//! - communicators are the `Comm` definitions; their group's members (as
//!   world ranks, through the MPI `COMM_LOCATIONS` group) translate the
//!   peers of point-to-point records, which OTF2 gives as ranks within
//!   the communicator. A `COMM_SELF` group is each rank's own.
//!
//! Local definitions are read before each location's events so that a
//! writer's mapping tables (local ids to global ones) apply.
#![allow(unsafe_code)]

use crate::TraceError;
use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_char, c_void, CStr, CString};
use std::path::{Path, PathBuf};

use crate::ffi::*;
use crate::trace::{Call, Record, Trace};

#[derive(Default)]
struct Defs {
    strings: HashMap<u32, String>,
    /// Region -> (name, of the MPI paradigm).
    regions: HashMap<u32, (u32, bool)>,
    location_groups: Vec<(u32, u8)>,
    locations: Vec<(u64, u32)>,
    /// Group -> (type, paradigm, members).
    groups: HashMap<u32, (u8, u8, Vec<u64>)>,
    /// Comm -> (name, group).
    comms: Vec<(u32, u32, u32)>,
    timer_resolution: u64,
    global_offset: u64,
}

fn defs<'x>(ud: Ud) -> &'x mut Defs {
    // SAFETY: `ud` is the `&mut Defs` `read_definitions` registered, alive
    // for the whole read; OTF2 calls back on this thread only.
    unsafe { &mut *(ud as *mut Defs) }
}

extern "C" fn on_string(ud: Ud, r: u32, s: *const c_char) -> OTF2_CallbackCode {
    // SAFETY: OTF2 passes a NUL-terminated string valid during the call.
    let s = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
    defs(ud).strings.insert(r, s);
    OTF2_CALLBACK_SUCCESS
}
extern "C" fn on_clock(ud: Ud, resolution: u64, offset: u64, _len: u64, _rt: u64) -> OTF2_CallbackCode {
    let d = defs(ud);
    d.timer_resolution = resolution;
    d.global_offset = offset;
    OTF2_CALLBACK_SUCCESS
}
extern "C" fn on_location_group(ud: Ud, r: u32, _name: u32, kind: u8, _parent: u32, _creator: u32) -> OTF2_CallbackCode {
    defs(ud).location_groups.push((r, kind));
    OTF2_CALLBACK_SUCCESS
}
extern "C" fn on_location(ud: Ud, r: u64, _name: u32, _kind: u8, _events: u64, group: u32) -> OTF2_CallbackCode {
    defs(ud).locations.push((r, group));
    OTF2_CALLBACK_SUCCESS
}
#[allow(clippy::too_many_arguments)]
extern "C" fn on_region(ud: Ud, r: u32, name: u32, _canonical: u32, _desc: u32, _role: u8, paradigm: u8, _flags: u32, _file: u32, _b: u32, _e: u32) -> OTF2_CallbackCode {
    let d = defs(ud);
    let mpi = paradigm == OTF2_PARADIGM_MPI || d.strings.get(&name).is_some_and(|s| s.starts_with("MPI_"));
    d.regions.insert(r, (name, mpi));
    OTF2_CALLBACK_SUCCESS
}
#[allow(clippy::too_many_arguments)]
extern "C" fn on_group(ud: Ud, r: u32, _name: u32, kind: u8, paradigm: u8, _flags: u32, n: u32, members: *const u64) -> OTF2_CallbackCode {
    let m = if n == 0 || members.is_null() {
        Vec::new()
    } else {
        // SAFETY: OTF2 passes `n` members valid during the call.
        unsafe { std::slice::from_raw_parts(members, n as usize) }.to_vec()
    };
    defs(ud).groups.insert(r, (kind, paradigm, m));
    OTF2_CALLBACK_SUCCESS
}
extern "C" fn on_comm(ud: Ud, r: u32, name: u32, group: u32, _parent: u32, _flags: u32) -> OTF2_CallbackCode {
    defs(ud).comms.push((r, name, group));
    OTF2_CALLBACK_SUCCESS
}

/// The definitions resolved: ranks, their master locations, communicators.
struct Resolved {
    ranks: u32,
    master: Vec<u64>,
    /// Comm -> world ranks (`None`: MPI_COMM_SELF, the calling rank).
    comms: HashMap<u32, Option<Vec<u32>>>,
    comm_names: BTreeMap<u32, String>,
    offset: u64,
    ns_per_tick: f64,
}

/// One rank's event reading.
struct Events<'a> {
    defs: &'a Defs,
    res: &'a Resolved,
    rank: u32,
    /// The MPI regions entered and not yet left, innermost last (OTF2
    /// region ids): a Leave must close the innermost.
    entered: Vec<u32>,
    open: Option<Call>,
    calls: Vec<Call>,
    records: Vec<Record>,
    names: &'a mut Vec<String>,
    /// Per OTF2 region id: its call name's index in `names`, [`NOT_MPI`],
    /// or [`UNSEEN`] (looked up in the definitions on first use; read for
    /// every Enter and Leave, so a vector, not a map).
    name_of_region: &'a mut Vec<u32>,
    /// The same for region ids from [`DENSE_REGIONS`] on (sparse ids).
    sparse_regions: &'a mut HashMap<u32, u32>,
    error: Option<String>,
}

/// `name_of_region` entries: a region not seen yet, and a region that is
/// not an MPI call (or not defined).
const UNSEEN: u32 = u32::MAX;
const NOT_MPI: u32 = u32::MAX - 1;
/// Region ids from this on are kept in a map instead.
const DENSE_REGIONS: u32 = 1 << 20;

impl Events<'_> {
    fn ns(&self, t: u64) -> u64 {
        let ticks = t.saturating_sub(self.res.offset);
        // A nanosecond clock (the usual one): the ticks as they are, what
        // the rounding below gives them (up to 2^53), without its cost on
        // every event.
        if self.res.ns_per_tick == 1.0 && ticks < 1 << 53 {
            return ticks;
        }
        (ticks as f64 * self.res.ns_per_tick).round() as u64
    }
    /// The call name index of MPI region `region`, or None for another
    /// region.
    fn region(&mut self, region: u32) -> Option<u32> {
        match self.name_of_region.get(region as usize) {
            Some(&NOT_MPI) => return None,
            Some(&i) if i != UNSEEN => return Some(i),
            _ => {}
        }
        if region >= DENSE_REGIONS {
            if let Some(&i) = self.sparse_regions.get(&region) {
                return (i != NOT_MPI).then_some(i);
            }
        }
        let found = self.look_up(region);
        if region < DENSE_REGIONS {
            if self.name_of_region.len() <= region as usize {
                self.name_of_region.resize(region as usize + 1, UNSEEN);
            }
            self.name_of_region[region as usize] = found.unwrap_or(NOT_MPI);
        } else {
            self.sparse_regions.insert(region, found.unwrap_or(NOT_MPI));
        }
        found
    }

    /// [`Self::region`] from the definitions: a new MPI call's name is
    /// added to `names` (in the order first seen).
    fn look_up(&mut self, region: u32) -> Option<u32> {
        let &(name, mpi) = self.defs.regions.get(&region)?;
        if !mpi {
            return None;
        }
        let s = self.defs.strings.get(&name).cloned().unwrap_or_else(|| format!("region {region}"));
        let i = match self.names.iter().position(|x| *x == s) {
            Some(i) => i as u32,
            None => {
                self.names.push(s);
                (self.names.len() - 1) as u32
            }
        };
        Some(i)
    }
    fn enter(&mut self, t: u64, region: u32) {
        if self.region(region).is_some() {
            self.entered.push(region);
            if self.entered.len() == 1 {
                let ns = self.ns(t);
                let name = self.region(region).expect("an MPI region");
                self.open = Some(Call { name, enter_ns: ns, leave_ns: ns, first_record: self.records.len() as u32, records: 0 });
            }
        }
    }
    /// Closes the innermost MPI region; a Leave that no Enter opened, or
    /// of another region than the innermost, is a damaged trace (refused:
    /// its calls' times could not be trusted).
    fn leave(&mut self, t: u64, region: u32) -> OTF2_CallbackCode {
        let Some(i) = self.region(region) else { return OTF2_CALLBACK_SUCCESS };
        match self.entered.pop() {
            Some(r) if r == region => {}
            Some(other) => {
                let inner = self.region(other).map_or_else(String::new, |k| self.names[k as usize].clone());
                return self.fail(format!(
                    "rank {}: a Leave of {} at {} ns while {inner} is the innermost call entered: the trace's Enter and Leave events do not pair",
                    self.rank,
                    self.names[i as usize],
                    self.ns(t)
                ));
            }
            None => {
                return self.fail(format!(
                    "rank {}: a Leave of {} at {} ns without its Enter: the trace's Enter and Leave events do not pair",
                    self.rank,
                    self.names[i as usize],
                    self.ns(t)
                ))
            }
        }
        if self.entered.is_empty() {
            if let Some(mut c) = self.open.take() {
                c.leave_ns = self.ns(t);
                c.records = self.records.len() as u32 - c.first_record;
                self.calls.push(c);
            }
        }
        OTF2_CALLBACK_SUCCESS
    }
    fn fail(&mut self, msg: String) -> OTF2_CallbackCode {
        if self.error.is_none() {
            self.error = Some(msg);
        }
        OTF2_CALLBACK_INTERRUPT
    }
    fn call_name(&self) -> String {
        self.open.as_ref().map_or_else(String::new, |c| self.names[c.name as usize].clone())
    }
    /// The world rank of rank `r` of communicator `comm`.
    fn world(&mut self, comm: u32, r: u32) -> Result<u32, String> {
        let what = self.call_name();
        match self.res.comms.get(&comm) {
            None => Err(format!(
                "rank {}: {what} on a communicator the trace does not define (id {comm}); inter-communicators and communicators made by unrecorded calls are not replayed",
                self.rank
            )),
            Some(None) if r == 0 => Ok(self.rank),
            Some(None) => Err(format!("rank {}: {what} names rank {r} of its MPI_COMM_SELF", self.rank)),
            Some(Some(m)) => m.get(r as usize).copied().ok_or_else(|| format!("rank {}: {what} names rank {r} of a communicator of {}", self.rank, m.len())),
        }
    }
    fn push(&mut self, kind: &str, rec: Result<Record, String>) -> OTF2_CallbackCode {
        if self.open.is_none() {
            return self.fail(format!("rank {}: an {kind} record outside any MPI call region", self.rank));
        }
        match rec {
            Ok(r) => {
                self.records.push(r);
                OTF2_CALLBACK_SUCCESS
            }
            Err(e) => self.fail(e),
        }
    }
}

fn events<'x>(ud: Ud) -> &'x mut Events<'x> {
    // SAFETY: `ud` is the `&mut Events` `read` registered for this
    // location's reader, alive while OTF2 reads it on this thread.
    unsafe { &mut *(ud as *mut Events<'x>) }
}

extern "C" fn ev_enter(_l: u64, t: u64, _p: u64, ud: Ud, _a: Attrs, region: u32) -> OTF2_CallbackCode {
    events(ud).enter(t, region);
    OTF2_CALLBACK_SUCCESS
}
extern "C" fn ev_leave(_l: u64, t: u64, _p: u64, ud: Ud, _a: Attrs, region: u32) -> OTF2_CallbackCode {
    events(ud).leave(t, region)
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_send(_l: u64, _t: u64, _p: u64, ud: Ud, _a: Attrs, peer: u32, comm: u32, tag: u32, bytes: u64) -> OTF2_CallbackCode {
    let e = events(ud);
    let r = e.world(comm, peer).map(|peer| Record::Send { peer, comm, tag, bytes, request: None });
    e.push("MpiSend", r)
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_recv(_l: u64, _t: u64, _p: u64, ud: Ud, _a: Attrs, peer: u32, comm: u32, tag: u32, bytes: u64) -> OTF2_CallbackCode {
    let e = events(ud);
    let r = e.world(comm, peer).map(|peer| Record::Recv { peer, comm, tag, bytes, request: None });
    e.push("MpiRecv", r)
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_isend(_l: u64, _t: u64, _p: u64, ud: Ud, _a: Attrs, peer: u32, comm: u32, tag: u32, bytes: u64, q: u64) -> OTF2_CallbackCode {
    let e = events(ud);
    let r = e.world(comm, peer).map(|peer| Record::Send { peer, comm, tag, bytes, request: Some(q) });
    e.push("MpiIsend", r)
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_irecv(_l: u64, _t: u64, _p: u64, ud: Ud, _a: Attrs, peer: u32, comm: u32, tag: u32, bytes: u64, q: u64) -> OTF2_CallbackCode {
    let e = events(ud);
    let r = e.world(comm, peer).map(|peer| Record::Recv { peer, comm, tag, bytes, request: Some(q) });
    e.push("MpiIrecv", r)
}
extern "C" fn ev_isend_complete(_l: u64, _t: u64, _p: u64, ud: Ud, _a: Attrs, q: u64) -> OTF2_CallbackCode {
    events(ud).push("MpiIsendComplete", Ok(Record::SendDone(q)))
}
extern "C" fn ev_irecv_request(_l: u64, _t: u64, _p: u64, ud: Ud, _a: Attrs, q: u64) -> OTF2_CallbackCode {
    events(ud).push("MpiIrecvRequest", Ok(Record::Posted(q)))
}
extern "C" fn ev_cancelled(_l: u64, _t: u64, _p: u64, ud: Ud, _a: Attrs, q: u64) -> OTF2_CallbackCode {
    events(ud).push("MpiRequestCancelled", Ok(Record::Cancelled(q)))
}
#[allow(clippy::too_many_arguments)]
extern "C" fn ev_collective(_l: u64, _t: u64, _p: u64, ud: Ud, _a: Attrs, op: u8, comm: u32, root: u32, sent: u64, received: u64) -> OTF2_CallbackCode {
    let e = events(ud);
    let r = if e.res.comms.contains_key(&comm) {
        Ok(Record::Collective { op, comm, root: (root != OTF2_UNDEFINED_UINT32).then_some(root), sent, received })
    } else {
        Err(format!("rank {}: {} on a communicator the trace does not define (id {comm})", e.rank, e.call_name()))
    };
    e.push("MpiCollectiveEnd", r)
}

/// The `.otf2` anchor file of a trace given as it or its directory.
pub fn anchor(path: &str) -> Result<PathBuf, TraceError> {
    anchor_file(path).map_err(TraceError::Archive)
}

fn anchor_file(path: &str) -> Result<PathBuf, String> {
    let p = Path::new(path);
    if p.is_dir() {
        let mut anchors: Vec<PathBuf> = std::fs::read_dir(p)
            .map_err(|e| format!("{path}: cannot read the directory: {e}"))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|f| f.extension().is_some_and(|x| x == "otf2"))
            .collect();
        if anchors.len() != 1 {
            return Err(format!("{path}: expected a trace directory with one .otf2 anchor file, found {}", anchors.len()));
        }
        return Ok(anchors.remove(0));
    }
    if !p.exists() {
        return Err(format!("{path}: no such trace (give an OTF2 archive's directory or its .otf2 file)"));
    }
    if p.extension().is_none_or(|x| x != "otf2") {
        return Err(format!("{path}: expected an OTF2 archive (a directory or its .otf2 anchor file)"));
    }
    Ok(p.to_path_buf())
}

struct Reader(*mut OTF2_Reader);
impl Drop for Reader {
    fn drop(&mut self) {
        // SAFETY: opened by OTF2_Reader_Open, closed once.
        unsafe { OTF2_Reader_Close(self.0) };
    }
}

fn check(code: OTF2_ErrorCode, path: &str, what: &str) -> Result<(), String> {
    if code == OTF2_SUCCESS {
        Ok(())
    } else {
        Err(format!("{path}: cannot read the OTF2 archive ({what}: OTF2 error {code})"))
    }
}

/// OTF2's own error printer, replaced once by one that prints nothing: the
/// reader turns error codes into one-line messages itself.
extern "C" fn quiet(_ud: Ud, _file: *const c_char, _line: u64, _func: *const c_char, code: OTF2_ErrorCode, _fmt: *const c_char, _va: *mut c_void) -> OTF2_ErrorCode {
    code
}

/// Opens the archive at `path` and reads its global definitions.
fn open(path: &str) -> Result<(Reader, PathBuf, Defs), String> {
    // SAFETY: registers a callback with the signature OTF2 expects (the
    // va_list is passed as a pointer on this platform and not read).
    unsafe { OTF2_Error_RegisterCallback(Some(quiet), std::ptr::null_mut()) };
    let file = anchor_file(path)?;
    let c = CString::new(file.to_string_lossy().as_bytes()).map_err(|_| format!("{path}: a path with a NUL byte"))?;
    // SAFETY: a valid C string; the handle is closed by `Reader`'s drop.
    let reader = Reader(unsafe { OTF2_Reader_Open(c.as_ptr()) });
    if reader.0.is_null() {
        return Err(format!("{path}: cannot open the OTF2 archive"));
    }
    let r = reader.0;
    let mut d = Defs::default();
    // SAFETY: every call below gets the open reader and a live callback
    // table; `d` outlives the read that calls back into it.
    unsafe {
        check(OTF2_Reader_SetSerialCollectiveCallbacks(r), path, "serial mode")?;
        let gd = OTF2_Reader_GetGlobalDefReader(r);
        if gd.is_null() {
            return Err(format!("{path}: the archive has no global definitions"));
        }
        let cb = OTF2_GlobalDefReaderCallbacks_New();
        OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, on_string);
        OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, on_clock);
        OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, on_location_group);
        OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, on_location);
        OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, on_region);
        OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, on_group);
        OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, on_comm);
        let reg = OTF2_Reader_RegisterGlobalDefCallbacks(r, gd, cb, &mut d as *mut Defs as *mut c_void);
        let mut n = 0u64;
        let read = OTF2_Reader_ReadAllGlobalDefinitions(r, gd, &mut n);
        OTF2_GlobalDefReaderCallbacks_Delete(cb);
        OTF2_Reader_CloseGlobalDefReader(r, gd);
        check(reg, path, "definitions")?;
        check(read, path, "definitions")?;
    }
    Ok((reader, file, d))
}

/// The number of ranks of the trace at `path` (its definitions only).
pub fn ranks(path: &str) -> Result<u32, TraceError> {
    let (_reader, _, d) = open(path).map_err(TraceError::Archive)?;
    Ok(resolve(path, &d).map_err(TraceError::Content)?.ranks)
}

/// Reads the trace at `path` (an OTF2 archive's directory or anchor file).
pub fn read(path: &str) -> Result<Trace, TraceError> {
    let (reader, file, d) = open(path).map_err(TraceError::Archive)?;
    let r = reader.0;
    let res = resolve(path, &d).map_err(TraceError::Content)?;
    let mut names: Vec<String> = Vec::new();
    let mut name_of_region: Vec<u32> = Vec::new();
    let mut sparse_regions: HashMap<u32, u32> = HashMap::new();
    let mut calls = Vec::with_capacity(res.ranks as usize);
    let mut records = Vec::with_capacity(res.ranks as usize);
    // SAFETY: as above; each location's `Events` outlives its read.
    unsafe {
        for &loc in &res.master {
            OTF2_Reader_SelectLocation(r, loc);
        }
        let defs_open = OTF2_Reader_OpenDefFiles(r) == OTF2_SUCCESS;
        if defs_open {
            for &loc in &res.master {
                let dr = OTF2_Reader_GetDefReader(r, loc);
                if !dr.is_null() {
                    let mut n = 0u64;
                    OTF2_Reader_ReadAllLocalDefinitions(r, dr, &mut n);
                    OTF2_Reader_CloseDefReader(r, dr);
                }
            }
            OTF2_Reader_CloseDefFiles(r);
        }
        check(OTF2_Reader_OpenEvtFiles(r), path, "event files").map_err(TraceError::Archive)?;
        let cb = OTF2_EvtReaderCallbacks_New();
        OTF2_EvtReaderCallbacks_SetEnterCallback(cb, ev_enter);
        OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, ev_leave);
        OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, ev_send);
        OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, ev_recv);
        OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, ev_isend);
        OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, ev_irecv);
        OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, ev_isend_complete);
        OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, ev_irecv_request);
        OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, ev_cancelled);
        OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, ev_collective);
        let mut failure = None;
        for (rank, &loc) in res.master.iter().enumerate() {
            let er = OTF2_Reader_GetEvtReader(r, loc);
            if er.is_null() {
                failure = Some(TraceError::Archive(format!("{path}: rank {rank}: no events for its location {loc}")));
                break;
            }
            let mut ev = Events {
                defs: &d,
                res: &res,
                rank: rank as u32,
                entered: Vec::new(),
                open: None,
                calls: Vec::new(),
                records: Vec::new(),
                names: &mut names,
                name_of_region: &mut name_of_region,
                sparse_regions: &mut sparse_regions,
                error: None,
            };
            OTF2_Reader_RegisterEvtCallbacks(r, er, cb, &mut ev as *mut Events as *mut c_void);
            let mut n = 0u64;
            let code = OTF2_Reader_ReadAllLocalEvents(r, er, &mut n);
            OTF2_Reader_CloseEvtReader(r, er);
            if let Some(e) = ev.error.take() {
                failure = Some(TraceError::Content(format!("{path}: {e}")));
                break;
            }
            if code != OTF2_SUCCESS {
                failure = Some(TraceError::Archive(format!("{path}: rank {rank}: cannot read its events (OTF2 error {code})")));
                break;
            }
            if let Some(c) = &ev.open {
                failure = Some(TraceError::Content(format!(
                    "{path}: rank {rank}: its last call ({}) never returned: the trace is truncated (did the program end in MPI_Finalize?)",
                    names[c.name as usize]
                )));
                break;
            }
            calls.push(std::mem::take(&mut ev.calls));
            records.push(std::mem::take(&mut ev.records));
        }
        OTF2_EvtReaderCallbacks_Delete(cb);
        OTF2_Reader_CloseEvtFiles(r);
        if let Some(f) = failure {
            return Err(f);
        }
    }
    drop(reader);
    let comms = res.comms.iter().map(|(&c, m)| (c, m.clone())).collect();
    Ok(Trace { path: file.parent().map_or_else(|| path.to_string(), |p| p.to_string_lossy().into_owned()), ranks: res.ranks, comms, comm_names: res.comm_names, names, calls, records })
}

fn resolve(path: &str, d: &Defs) -> Result<Resolved, String> {
    let mut groups: Vec<u32> = d.location_groups.iter().filter(|g| g.1 == OTF2_LOCATION_GROUP_TYPE_PROCESS).map(|g| g.0).collect();
    groups.sort_unstable();
    if groups.is_empty() {
        return Err(format!("{path}: the trace defines no processes (location groups of type PROCESS)"));
    }
    let rank_of_group: HashMap<u32, u32> = groups.iter().enumerate().map(|(i, &g)| (g, i as u32)).collect();
    let mut master = vec![u64::MAX; groups.len()];
    for &(loc, g) in &d.locations {
        if let Some(&r) = rank_of_group.get(&g) {
            master[r as usize] = master[r as usize].min(loc);
        }
    }
    if let Some(r) = master.iter().position(|&m| m == u64::MAX) {
        return Err(format!("{path}: rank {r} (a process) has no location"));
    }
    let rank_of_location: HashMap<u64, u32> = master.iter().enumerate().map(|(r, &l)| (l, r as u32)).collect();
    // The MPI COMM_LOCATIONS group: communicator groups index into it.
    let locations = d.groups.values().find(|g| g.0 == OTF2_GROUP_TYPE_COMM_LOCATIONS && g.1 == OTF2_PARADIGM_MPI)
        .or_else(|| d.groups.values().find(|g| g.0 == OTF2_GROUP_TYPE_COMM_LOCATIONS));
    let mut comms = HashMap::new();
    let mut comm_names = BTreeMap::new();
    for &(c, name, group) in &d.comms {
        let name_s = d.strings.get(&name).cloned().unwrap_or_default();
        let Some((kind, _, members)) = d.groups.get(&group) else {
            return Err(format!("{path}: communicator {name_s:?} refers to an undefined group {group}"));
        };
        let ranks = match *kind {
            OTF2_GROUP_TYPE_COMM_SELF => None,
            OTF2_GROUP_TYPE_COMM_GROUP => {
                let Some((_, _, locs)) = locations else {
                    return Err(format!("{path}: communicator {name_s:?}: the trace has no MPI COMM_LOCATIONS group"));
                };
                let mut out = Vec::with_capacity(members.len());
                for &m in members {
                    let loc = *locs.get(m as usize).ok_or_else(|| format!("{path}: communicator {name_s:?} has member {m} beyond the {} MPI locations", locs.len()))?;
                    out.push(*rank_of_location.get(&loc).ok_or_else(|| format!("{path}: communicator {name_s:?} has a member (location {loc}) that is not a rank's first location"))?);
                }
                Some(out)
            }
            k => return Err(format!("{path}: communicator {name_s:?} has a group of type {k}, not a communicator group")),
        };
        comms.insert(c, ranks);
        comm_names.insert(c, name_s);
    }
    let ns_per_tick = if d.timer_resolution > 0 { 1e9 / d.timer_resolution as f64 } else { 1.0 };
    Ok(Resolved { ranks: groups.len() as u32, master, comms, comm_names, offset: d.global_offset, ns_per_tick })
}
