//! A run's counter samples handed to Python without a copy.
//!
//! The engine's columns (`CounterSamples`: millions of rows at the default
//! period) are moved, not copied, into [`SampleColumn`] objects that
//! Python reads through the buffer protocol (`pa.py_buffer(column)`,
//! `memoryview(column)`) as little-endian bytes; `tofusim.samples` wraps
//! them as Arrow arrays and writes the Parquet files. No Python object per
//! row, and no second copy of the columns in memory.

use pyo3::exceptions::PyBufferError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::ffi::{c_int, c_void};
use tofusim_experiment::engine::CounterSamples;

/// The values of one column, in their own integer type.
enum Values {
    U64(Vec<u64>),
    U32(Vec<u32>),
    U8(Vec<u8>),
}

impl Values {
    /// The values' memory as bytes: little-endian, since each value was
    /// made little-endian when the column was made.
    fn bytes(&self) -> &[u8] {
        fn raw<T>(v: &[T]) -> &[u8] {
            // SAFETY: integers have no padding bytes and every byte is a
            // valid u8; the slice borrows `v` and so lives no longer.
            unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
        }
        match self {
            Values::U64(v) => raw(v),
            Values::U32(v) => raw(v),
            Values::U8(v) => raw(v),
        }
    }
}

/// One column of counter samples: the engine's vector, read-only, kept
/// alive by this object while any view of it is. `len()` is its size in
/// bytes.
#[pyclass(frozen, module = "tofusim._core")]
pub struct SampleColumn {
    values: Values,
}

impl SampleColumn {
    fn u64(mut v: Vec<u64>) -> Self {
        // A no-op on a little-endian machine (the compiler removes it).
        v.iter_mut().for_each(|x| *x = x.to_le());
        SampleColumn { values: Values::U64(v) }
    }

    fn u32(mut v: Vec<u32>) -> Self {
        v.iter_mut().for_each(|x| *x = x.to_le());
        SampleColumn { values: Values::U32(v) }
    }

    fn u8(v: Vec<u8>) -> Self {
        SampleColumn { values: Values::U8(v) }
    }
}

#[pymethods]
impl SampleColumn {
    /// The buffer protocol: the bytes, read-only (a writable request is
    /// refused with BufferError); the view holds a reference to the column.
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut pyo3::ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("no view to fill"));
        }
        let bytes = slf.get().values.bytes();
        // SAFETY: `view` is the caller's; the pointer stays valid while the
        // column lives, and PyBuffer_FillInfo takes a reference to it.
        let failed = unsafe {
            pyo3::ffi::PyBuffer_FillInfo(view, slf.as_ptr(), bytes.as_ptr() as *mut c_void, bytes.len() as pyo3::ffi::Py_ssize_t, 1, flags)
        };
        if failed != 0 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }

    fn __len__(&self) -> usize {
        self.values.bytes().len()
    }

    /// Pickled (a sweep's results cross processes) as the bytes object of its bytes.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        Ok((py.get_type::<PyBytes>().into_any(), (PyBytes::new(py, self.values.bytes()),)))
    }
}

/// Moves a run's counter samples out of `c` into `into`, as
/// `{"ports": {column: (dtype, SampleColumn)}, "vcs": {...}, "port_names",
/// "vc_names", "vc_buffer_chunks", "period_cycles"}`; `c` keeps its names
/// and counts but no rows, so the run's JSON must be made before.
pub fn put_counter_samples(py: Python<'_>, into: &Bound<'_, PyDict>, c: &mut CounterSamples) -> PyResult<()> {
    use std::mem::take;
    let col = |d: &Bound<'_, PyDict>, name: &str, dtype: &str, column: SampleColumn| -> PyResult<()> {
        d.set_item(name, (dtype, Py::new(py, column)?))
    };
    let (t, p) = (&mut c.ports, PyDict::new(py));
    col(&p, "cycle", "<u8", SampleColumn::u64(take(&mut t.cycle)))?;
    col(&p, "router", "<u4", SampleColumn::u32(take(&mut t.router)))?;
    col(&p, "port", "u1", SampleColumn::u8(take(&mut t.port)))?;
    col(&p, "bytes", "<u8", SampleColumn::u64(take(&mut t.bytes)))?;
    col(&p, "packets", "<u8", SampleColumn::u64(take(&mut t.packets)))?;
    col(&p, "busy_cycles", "<u8", SampleColumn::u64(take(&mut t.busy_cycles)))?;
    col(&p, "idle_cycles", "<u8", SampleColumn::u64(take(&mut t.idle_cycles)))?;
    col(&p, "depleted_cycles", "<u8", SampleColumn::u64(take(&mut t.depleted_cycles)))?;
    let (t, v) = (&mut c.vcs, PyDict::new(py));
    col(&v, "cycle", "<u8", SampleColumn::u64(take(&mut t.cycle)))?;
    col(&v, "router", "<u4", SampleColumn::u32(take(&mut t.router)))?;
    col(&v, "port", "u1", SampleColumn::u8(take(&mut t.port)))?;
    col(&v, "vc", "u1", SampleColumn::u8(take(&mut t.vc)))?;
    col(&v, "bytes", "<u8", SampleColumn::u64(take(&mut t.bytes)))?;
    col(&v, "packets", "<u8", SampleColumn::u64(take(&mut t.packets)))?;
    col(&v, "held_chunks", "<u4", SampleColumn::u32(take(&mut t.held_chunks)))?;
    into.set_item("ports", p)?;
    into.set_item("vcs", v)?;
    into.set_item("port_names", c.port_names.clone())?;
    into.set_item("vc_names", c.vc_names.clone())?;
    into.set_item("vc_buffer_chunks", c.vc_buffer_chunks)?;
    into.set_item("period_cycles", c.period_cycles)?;
    Ok(())
}
