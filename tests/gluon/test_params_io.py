"""MXNet's NDArray file format: our reader/writer against files MXNet writes and reads."""

import numpy as np
import pytest

from ast_hybrid.io import params_file as params_io


def _arrays():
    rng = np.random.default_rng(0)
    return {"a.weight": rng.standard_normal((3, 4)).astype("float32"),
            "b": np.arange(5, dtype="int32"), "c": rng.standard_normal((2,)).astype("float64"),
            "d": np.arange(6, dtype="uint8").reshape(1, 2, 3), "e": np.ones((2, 2), "float16"),
            "f": np.arange(3, dtype="int64")}


def test_roundtrip_dict_and_list(tmp_path):
    arrays = _arrays()
    save = tmp_path / "x.params"
    params_io.save(save, arrays)
    back = params_io.load(save)
    assert list(back) == list(arrays)
    for k in arrays:
        assert back[k].dtype == arrays[k].dtype and np.array_equal(back[k], arrays[k])
    params_io.save(save, [arrays["b"], arrays["c"]])
    lst = params_io.load(save)
    assert isinstance(lst, list) and np.array_equal(lst[1], arrays["c"])


@pytest.mark.oracle
def test_reads_what_mxnet_writes_byte_for_byte(oracle, tmp_path):
    path = str(tmp_path / "mx.params")
    arrays = _arrays()
    oracle.run(f"nd.save({path!r}, {{k: nd.array(v, dtype=v.dtype) for k, v in inp.items()}})", **arrays)
    back = params_io.load(path)
    for k in arrays:
        assert back[k].dtype == arrays[k].dtype and np.array_equal(back[k], arrays[k]), k
    # our writer produces the same bytes MXNet does
    assert params_io.dumps(back) == open(path, "rb").read()


@pytest.mark.oracle
def test_mxnet_reads_what_we_write(oracle, tmp_path):
    path = str(tmp_path / "ours.params")
    arrays = _arrays()
    params_io.save(path, arrays)
    out = oracle.run(f"d = nd.load({path!r})\nfor k, v in d.items(): out[k] = v.asnumpy()")
    for k in arrays:
        assert out[k].dtype == arrays[k].dtype and np.array_equal(out[k], arrays[k]), k


@pytest.mark.oracle
def test_reads_sparse_arrays_mxnet_writes(oracle, tmp_path):
    """row_sparse (a SparseEmbedding's weight, as save_parameters writes it) and csr arrays load dense."""
    path = str(tmp_path / "sparse.params")
    ref = oracle.run(f"""
rs = np.random.RandomState(2)
dense = rs.uniform(-1, 1, (6, 3)).astype('float32'); dense[[0, 2, 5]] = 0
mat = rs.uniform(-1, 1, (4, 5)); mat[rs.uniform(size=(4, 5)) < 0.6] = 0
arrays = {{'rows': nd.array(dense).tostype('row_sparse'), 'none': nd.zeros((3, 2), stype='row_sparse'),
          'csr': nd.array(mat, dtype='float64').tostype('csr'), 'int_rows': nd.array(dense * 10, dtype='int32')
          .tostype('row_sparse'), 'dense': nd.array(dense)}}
nd.save({path!r}, arrays)
for k, v in arrays.items(): out[k] = v.tostype('default').asnumpy()
meta['stypes'] = {{k: v.stype for k, v in arrays.items()}}
""")
    assert ref["meta"]["stypes"]["rows"] == "row_sparse" and ref["meta"]["stypes"]["csr"] == "csr"
    back = params_io.load(path)
    for k, v in back.items():
        assert v.dtype == ref[k].dtype and np.array_equal(v, ref[k]), k


def test_bad_files_give_clear_errors(tmp_path):
    p = tmp_path / "bad.params"
    p.write_bytes(b"hello world, not params at all")
    with pytest.raises(params_io.ParamsFileError, match="not an MXNet NDArray file"):
        params_io.load(p)
    good = params_io.dumps({"w": np.zeros((10, 10), "float32")})
    p.write_bytes(good[: len(good) - 300])
    with pytest.raises(params_io.ParamsFileError, match=r"truncated.*array #0 data"):
        params_io.load(p)
    p.write_bytes(b"\x01")
    with pytest.raises(params_io.ParamsFileError, match="too short"):
        params_io.load(p)
    with pytest.raises(params_io.ParamsFileError, match="cannot read"):
        params_io.load(tmp_path / "missing.params")
    corrupt = bytearray(good)
    corrupt[24:28] = b"\0\0\0\0"
    p.write_bytes(bytes(corrupt))
    with pytest.raises(params_io.ParamsFileError, match="bad magic"):
        params_io.load(p)


def test_corrupt_sparse_array_gives_a_clear_error():
    import struct

    head = struct.pack("<QQQ", params_io.LIST_MAGIC, 0, 1)
    array = struct.pack("<Ii", params_io.V2_MAGIC, 1)                  # row_sparse
    array += struct.pack("<Iqq", 2, 1, 2) + struct.pack("<Iqq", 2, 2, 2)   # one stored row of a (2, 2) array
    array += struct.pack("<iii", 1, 0, 0) + struct.pack("<iIq", 6, 1, 1)   # cpu, float32; int64 indices (1,)
    array += struct.pack("<ffq", 1.0, 2.0, 7)                          # the row, stored at index 7
    with pytest.raises(params_io.ParamsFileError, match=r"array #0: its sparse indices do not fit shape \(2, 2\)"):
        params_io.loads(head + array + struct.pack("<Q", 0))
    fixed = head + array[:-8] + struct.pack("<q", 1) + struct.pack("<Q", 0)
    assert params_io.loads(fixed)[0].tolist() == [[0.0, 0.0], [1.0, 2.0]]


def test_reads_mxnet_legacy_v0_and_v1_records(tmp_path):
    """MXNet's NDArray::LegacyLoad formats: V0 (the magic is the ndim, uint32 dimensions) and V1 (int64
    dimensions), each dense with a context and a dtype flag and no storage type."""
    import struct

    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    v0 = struct.pack("<I2I", 2, 2, 3) + struct.pack("<iii", 1, 0, 0) + values.tobytes()
    v1 = struct.pack("<II2q", params_io.V1_MAGIC, 2, 2, 3) + struct.pack("<iii", 1, 0, 0) + values.tobytes()
    for record in (v0, v1):
        buf = struct.pack("<QQQ", params_io.LIST_MAGIC, 0, 2) + record + record + struct.pack("<Q", 0)
        back = params_io.loads(buf)
        assert len(back) == 2 and all(np.array_equal(b, values) and b.dtype == np.float32 for b in back)


def test_nd_load_checks_the_shape_semantics_as_mxnet(tmp_path):
    """A file saved under numpy shape semantics (V3 records) loads only under them, and a V2 file only
    without them: MXNet's MXNetError either way."""
    import ast_hybrid.mxnet as mx

    path = str(tmp_path / "a")
    mx.nd.save(path, [mx.nd.ones((2, 3))])     # (a zero dimension is refused outside np shapes, as MXNet)
    with mx.np_shape(True), pytest.raises(mx.MXNetError, match="not saved in np shape semantics"):
        mx.nd.load(path)
    with mx.np_shape(True):
        mx.nd.save(path, [mx.nd.ones((2, 0))])
    with pytest.raises(mx.MXNetError, match="saved in np shape semantics"):
        mx.nd.load(path)
    with mx.np_shape(True):
        assert mx.nd.load(path)[0].shape == (2, 0)


def test_from_numpy_zero_copy_is_the_numpy_memory():
    """MXNet's from_numpy(zero_copy=True): the numpy array turns read-only and writes into the NDArray reach
    it; a non-contiguous array is a ValueError; zero_copy=False copies."""
    from ast_hybrid import nd

    a = np.array([[1, 2], [3, 4], [5, 6]], dtype="float32")
    x = nd.from_numpy(a)
    with pytest.raises(ValueError):
        a[2, 1] = 0
    x[2, 1] = 100
    assert a[2, 1] == 100 and x.asnumpy()[2, 1] == 100
    with pytest.raises(ValueError):
        nd.from_numpy(np.ones((2, 3)).T)
    b = np.ones(2, "float32")
    y = nd.from_numpy(b, zero_copy=False)
    y[:] = 5
    assert b.flags.writeable and b[0] == 1
