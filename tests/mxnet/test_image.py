"""``mxnet.image`` against MXNet 1.9.1: resizing (nearest, bilinear), crops, borders, normalisation, decoding
and the augmenters give MXNet's arrays; what is not implemented says so, naming the MXNet API."""

from __future__ import annotations

import io
import traceback

import numpy as np
import pytest

R = np.random.RandomState(5)
INPUTS = {"u8": R.randint(0, 256, (9, 13, 3)).astype(np.uint8),
          "f32": R.uniform(0, 255, (9, 13, 3)).astype(np.float32)}


def _png(rgb):
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="PNG")
    return np.frombuffer(buf.getvalue(), np.uint8)


@pytest.mark.oracle
@pytest.mark.parametrize("src", ["u8", "f32"])
@pytest.mark.parametrize("call", [
    "mx.image.imresize(x, 20, 7, interp=1)", "mx.image.imresize(x, 5, 4, interp=1)",
    "mx.image.imresize(x, 20, 17, interp=0)", "mx.image.imresize(x, 7, 20, interp=2)",
    "mx.image.imresize(x, 4, 5, interp=2)", "mx.image.imresize(x, 31, 23, 2)", "mx.image.imresize(x, 13, 9, 2)",
    "mx.image.resize_short(x, 4)", "mx.image.center_crop(x, (20, 20))[0]",
    "mx.image.fixed_crop(x, 1, 1, 5, 5, (7, 8))", "mx.image.imresize(x, 4, 5, interp=3)",
    "mx.image.imresize(x, 13, 3, interp=3)", "mx.image.fixed_crop(x, 0, 0, 12, 8, (6, 4), interp=3)",
    "mx.image.fixed_crop(x, 0, 0, 12, 9, (4, 3), interp=9)", "mx.image.imresize(x, 6, 9, interp=3)",
    "mx.image.imresize(x, 6, 4, 0)", "mx.image.resize_short(x, 20, interp=3)", "mx.image.imresize(x, 7, 20, 3)",
    "mx.image.imresize(x, 31, 23, interp=3)", "mx.image.imresize(x, 31, 23, interp=4)",
    "mx.image.imresize(x, 5, 4, interp=4)", "mx.image.imresize(x, 7, 20, interp=4)",
    "mx.image.imresize(x, 13, 9, interp=4)", "mx.image.imresize(x, 13, 3)",
    "mx.image.fixed_crop(x, 2, 1, 7, 5)", "mx.image.fixed_crop(x, 2, 1, 7, 5, (10, 8), interp=1)",
    "mx.image.center_crop(x, (6, 6), interp=1)[0]", "mx.image.center_crop(x, (30, 20), interp=0)[0]",
    "mx.image.resize_short(x, 4, interp=1)", "mx.image.resize_short(x, 18, interp=0)",
    "mx.image.copyMakeBorder(x, 1, 2, 3, 4)", "mx.image.copyMakeBorder(x, 2, 0, 1, 3, type=0, value=7)",
    "mx.image.copyMakeBorder(x, 2, 3, 1, 0, values=(1, 2, 300))",
    "mx.image.copyMakeBorder(x, 3, 2, 4, 1, type=1)", "mx.image.copyMakeBorder(x, 3, 2, 4, 1, type=2)",
    "mx.image.copyMakeBorder(x, 3, 2, 4, 1, type=3)", "mx.image.copyMakeBorder(x, 3, 2, 4, 1, type=4)",
])
def test_image_functions_match_mxnet(both, src, call):
    both(f"x = nd.array(inp['{src}'], dtype=inp['{src}'].dtype)\nout['y'] = {call}\n", rtol=1e-6, atol=1e-4,
         **INPUTS)


@pytest.mark.oracle
def test_random_crops_draw_as_mxnet(both):
    both("import random\nrandom.seed(11)\nx = nd.array(inp['u8'], dtype='uint8')\n"
         "for i in range(4):\n"
         "    y, box = mx.image.random_crop(x, (5, 4), interp=1)\n    out['c%d' % i], meta['c%d' % i] = y, list(box)\n"
         "    y, box = mx.image.random_size_crop(x, (6, 6), 0.3, (0.5, 2.0), interp=1)\n"
         "    out['s%d' % i], meta['s%d' % i] = y, list(box)\n", rtol=0, **INPUTS)


@pytest.mark.oracle
def test_color_normalize_works_in_place_as_mxnet(both):
    both("x = nd.array(inp['f32'])\n"
         "y = mx.image.color_normalize(x, nd.array([10., 20., 30.]), nd.array([2., 4., 8.]))\n"
         "meta['same'] = y is x\nout['x'] = x\n", **INPUTS)


@pytest.mark.oracle
@pytest.mark.parametrize("args", ["", "flag=1, to_rgb=False", "0"])
def test_imdecode_of_a_png_gives_mxnets_pixels(both, args):
    both(f"out['y'] = mx.image.imdecode(inp['png'].tobytes(), {args})\n"
         f"out['z'] = mx.image.imdecode(inp['png'], {args})\n", rtol=0,
         atol=1 if args == "0" else 0, png=_png(INPUTS["u8"]))     # grey: OpenCV's and Pillow's luma may differ by 1


@pytest.mark.oracle
def test_imread_of_a_png_gives_mxnets_pixels(both, tmp_path):
    path = tmp_path / "a.png"
    path.write_bytes(_png(INPUTS["u8"]).tobytes())
    both(f"out['y'] = mx.image.imread({str(path)!r})\nout['bgr'] = mx.image.imread({str(path)!r}, to_rgb=False)\n",
         rtol=0)


@pytest.mark.oracle
def test_augmenters_draw_and_compute_as_mxnet(both):
    both("import random\nrandom.seed(4)\nnp.random.seed(4)\n"
         "augs = mx.image.CreateAugmenter((3, 6, 6), resize=8, rand_crop=True, rand_mirror=True, mean=True,\n"
         "    std=True, brightness=0.3, contrast=0.3, saturation=0.3, hue=0.1, pca_noise=0.1, rand_gray=0.5,\n"
         "    inter_method=1)\n"
         "meta['names'] = [type(a).__name__ for a in augs]\n"
         "for i in range(3):\n"
         "    y = nd.array(inp['u8'], dtype='uint8')\n"
         "    for a in augs:\n        y = a(y)\n"
         "    out['y%d' % i] = y\n"
         "seq = mx.image.SequentialAug([mx.image.ForceResizeAug((5, 3), interp=0), mx.image.CastAug('float16')])\n"
         "out['seq'] = seq(nd.array(inp['f32']))\nmeta['dumps'] = [a.dumps() for a in augs[:3]]\n"
         "meta['interp'] = [mx.image.image._get_interp_method(9, s)\n"
         "                  for s in [(4, 4, 8, 8), (8, 8, 4, 4), (4, 8, 8, 4)]]\n",
         rtol=1e-5, atol=1e-4, **INPUTS)


@pytest.mark.parametrize("statement,api", [
    ("mx.image.random_rotate(x, (0, 30))", "mxnet.image.random_rotate"),
    ("mx.image.ImageIter(2, (3, 4, 4), path_imgrec='a.rec')", "mxnet.image.ImageIter"),
    ("mx.image.imrotate(x, 30)", "mxnet.image.imrotate"),
    ("mx.image.ImageDetIter(2, (3, 4, 4))", "mxnet.image.ImageDetIter"),
    ("mx.image.CreateDetAugmenter((3, 4, 4))", "mxnet.image.CreateDetAugmenter"),
])
def test_what_is_not_implemented_names_the_mxnet_api_at_the_callers_line(mx, statement, api):
    x = mx.nd.array(INPUTS["f32"])
    with pytest.raises(NotImplementedError) as info:
        exec(compile(statement, __file__, "exec"), {"mx": mx, "x": x})
    assert api in str(info.value) and "not available in ast-hybrid" in str(info.value)
    assert traceback.extract_tb(info.tb)[1].filename == __file__        # the frame after this test's: the call


@pytest.mark.oracle
def test_every_mxnet_image_name_is_here(mx, oracle):
    want = oracle.run("import mxnet.image as i, mxnet.image.image as ii, mxnet.image.detection as d\n"
                      "meta['n'] = sorted(n for n in dir(i) if not n.startswith('_') and n[0].isupper() or\n"
                      "    callable(getattr(i, n)) and\n"
                      "    getattr(getattr(i, n), '__module__', '').startswith('mxnet.image'))\n")
    missing = [n for n in want["meta"]["n"] if not hasattr(mx.image, n)]
    assert not missing


@pytest.mark.oracle
@pytest.mark.parametrize("src", ["u8", "f32"])
@pytest.mark.parametrize("call", [
    "nd.image.to_tensor(x)", "nd.image.to_tensor(nd.stack(x, x))",
    "nd.image.normalize(nd.image.to_tensor(x), mean=(0.1, 0.2, 0.3), std=(0.5, 0.25, 2.0))",
    "nd.image.normalize(nd.image.to_tensor(nd.stack(x, x)), mean=0.5, std=0.2)",
    "nd.image.resize(x, (7, 5))", "nd.image.resize(x, 6, keep_ratio=True)", "nd.image.resize(x, (20, 4), interp=2)",
    "nd.image.resize(nd.stack(x, x), (5, 12))", "nd.image.resize(x, (5, 3), interp=3)",
    # even sizes: MXNet 1.9.1 leaves the middle column (row) of an odd width (height) uninitialised (measured:
    # garbage such as 4.4e+27 there, changing from call to call); ours mirrors it in place
    "nd.image.flip_left_right(x[:8, :12])", "nd.image.flip_top_bottom(x[:8, :12])",
    "nd.image.crop(x, 2, 1, 5, 4)", "nd.image.crop(nd.stack(x, x), 0, 3, 13, 2)",
])
def test_nd_image_operators_match_mxnet(both, src, call):
    both(f"x = nd.array(inp['{src}'], dtype=inp['{src}'].dtype)\nout['y'] = {call}\n", rtol=1e-6, atol=1e-4,
         **INPUTS)


def test_flips_of_odd_sizes_keep_the_middle(mx):
    x = mx.nd.array(INPUTS["f32"])
    np.testing.assert_array_equal(mx.nd.image.flip_left_right(x).asnumpy(), INPUTS["f32"][:, ::-1])
    np.testing.assert_array_equal(mx.nd.image.flip_top_bottom(x).asnumpy(), INPUTS["f32"][::-1])


def test_nd_image_random_operators_name_the_mxnet_api(mx):
    with pytest.raises(AttributeError, match=r"mxnet\.ndarray\.image\.random_hue is not available in ast-hybrid"):
        mx.nd.image.random_hue


@pytest.mark.parametrize("interp", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("src", ["u8", "f32"])
def test_resizing_a_traced_image_gives_the_concrete_result(mx, interp, src):
    """A concrete image is resized on the host (numpy); inside a trace (a hybridized block) the same
    arithmetic runs in jax: the same values (uint8 the same bits)."""
    import jax

    from ast_hybrid.ndarray import NDArray

    x = mx.nd.array(INPUTS[src], dtype=INPUTS[src].dtype)
    for w, h in ((20, 7), (5, 4), (9, 13)):
        host = mx.image.imresize(x, w, h, interp=interp).asnumpy()
        traced = jax.jit(lambda a: mx.image.imresize(NDArray(a), w, h, interp=interp)._arr)(x._arr)
        np.testing.assert_allclose(np.asarray(traced), host, rtol=1e-6, atol=1e-3 if src == "f32" else 0)
