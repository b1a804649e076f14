"""The detection ops of ``F.contrib``: boxes and regions, as MXNet computes them (GluonCV's SSD, YOLO and
Faster/Mask R-CNN call them).

- ``box_iou(lhs, rhs, format)``: the IoU matrix, corner or center boxes;
- ``box_nms`` (``box_non_maximum_suppression``): MXNet's order: filter, keep the ``topk`` best, then
  suppress greedily in score order; kept boxes first, the rest -1; memory linear in the boxes times ``topk``;
- ``box_encode``, ``box_decode``: regression targets from anchors to matched boxes, and boxes back from them;
- ``bipartite_matching``: greedy matching of score matrices, as MXNet's kernel;
- ``ROIPooling`` (max over rounded bins), ``ROIAlign`` (bilinear samples, ``sample_ratio`` > 0).

``ops/contrib.py`` re-exports every one (``F.contrib.box_nms``, ``nd.contrib.ROIAlign``); ``ROIPooling`` is
also at top level (``F.ROIPooling``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ast_hybrid.ops import deferred
from ast_hybrid.ops._core import as_tuple, check, choice, divided, op

__all__ = ["box_iou", "box_nms", "box_non_maximum_suppression", "box_encode", "box_decode", "bipartite_matching",
           "ROIPooling", "ROIAlign", "PSROIPooling"]


def _corners(b, fmt):
    if fmt == "corner":
        return b
    x, y, w, h = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return jnp.stack([x - w / 2, y - h / 2, x + w / 2, y + h / 2], axis=-1)


def _center(b):
    return jnp.stack([(b[..., 0] + b[..., 2]) / 2, (b[..., 1] + b[..., 3]) / 2, b[..., 2] - b[..., 0],
                      b[..., 3] - b[..., 1]], axis=-1)


def _iou(a, b):
    """IoU of every box in ``a`` (..., 4) with every box in ``b`` (M, 4), corner format."""
    lt = jnp.maximum(a[..., :, None, :2], b[..., None, :, :2])
    rb = jnp.minimum(a[..., :, None, 2:], b[..., None, :, 2:])
    wh = jnp.clip(rb - lt, 0)
    inter = wh[..., 0] * wh[..., 1]
    area_a = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
    area_b = (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    union = area_a[..., :, None] + area_b[..., None, :] - inter
    return jnp.where(union > 0, inter / jnp.where(union > 0, union, 1), 0)


@op(compile_arrays=("lhs", "rhs"))
def box_iou(lhs, rhs, format="corner"):
    """IoU matrix of shape ``lhs.shape[:-1] + rhs.shape[:-1]``."""
    choice("box_iou", "format", format, ("corner", "center"))
    a, b = _corners(jnp.asarray(lhs), format), _corners(jnp.asarray(rhs), format)
    bflat = b.reshape(-1, 4)
    out = _iou(a.reshape(-1, 4), bflat)
    return out.reshape(a.shape[:-1] + b.shape[:-1])


def _box_area(b, fmt):
    """MXNet's BoxArea: width * height, 0 when either is negative (corner: x2 - x1; center: w)."""
    w, h = (b[..., 2] - b[..., 0], b[..., 3] - b[..., 1]) if fmt == "corner" else (b[..., 2], b[..., 3])
    return jnp.where((w < 0) | (h < 0), 0, w * h)


def _overlap_1d(a1, a2, b1, b2, fmt):
    """MXNet's Intersect along one axis (``a1, a2``: x1, x2 for corner, x, w for center), clipped at 0."""
    if fmt == "center":
        aw, bw = a2 / 2, b2 / 2
        a1, a2, b1, b2 = a1 - aw, a1 + aw, b1 - bw, b1 + bw
    return jnp.maximum(jnp.minimum(a2, b2) - jnp.maximum(a1, b1), 0)


def _nms_iou(ref, others, ref_area, areas, fmt):
    """IoU of the box(es) ``ref`` (..., 4) with ``others`` (K, 4), in MXNet's arithmetic: the intersection
    over ``area_ref + area_other - intersection`` (0/0 is NaN, which suppresses nothing, as in MXNet)."""
    r, o = ref[..., None, :], others
    inter = _overlap_1d(r[..., 0], r[..., 2], o[..., 0], o[..., 2], fmt) * \
        _overlap_1d(r[..., 1], r[..., 3], o[..., 1], o[..., 3], fmt)
    return inter / (ref_area[..., None] + areas - inter)


# above this many candidates the suppression computes one row of IoUs per step instead of the K x K matrix
_NMS_MATRIX_MAX = 2048


def _nms_one(rows, k, thresholds, overlap_thresh, coord_start, score_index, id_index, background_id,
             force_suppress, in_format, out_format):
    """One batch item of box_nms: ``rows`` (N, W) -> (N, W); memory O(N + k * min(k, 2048))."""
    n, dtype = rows.shape[0], rows.dtype
    valid_thresh, cmp = thresholds
    score = rows[:, score_index]
    valid = score > valid_thresh
    if id_index >= 0:
        valid = valid & (rows[:, id_index] != jnp.asarray(background_id, dtype))
    # descending by score, ties by position (MXNet's stable sort), the valid boxes first; -0.0 ties 0.0
    key = jnp.where(valid, jnp.where(score == 0, jnp.zeros_like(score), score), -jnp.inf)
    _, order = lax.top_k(key, k)
    cand, keep = rows[order], valid[order]
    boxes = cand[:, coord_start:coord_start + 4]
    areas = _box_area(boxes, in_format)
    cls = jnp.trunc(cand[:, id_index]) if id_index >= 0 and not force_suppress else None
    pos = jnp.arange(k)

    def suppressed_by(i, iou):
        hit = (iou.astype(cmp) > overlap_thresh) & (pos > i)
        return hit if cls is None else hit & (cls == cls[i])

    if k <= _NMS_MATRIX_MAX:
        iou = _nms_iou(boxes, boxes, areas, areas, in_format)

        def step(i, keep):
            return keep & ~(suppressed_by(i, iou[i]) & keep[i])
    else:
        def step(i, keep):
            iou = _nms_iou(boxes[i], boxes, areas[i], areas, in_format)
            return keep & ~(suppressed_by(i, iou) & keep[i])

    keep = lax.fori_loop(0, k, step, keep)
    kept = jnp.argsort(~keep, stable=True)           # survivors first, in score order
    cand, keep = cand[kept], keep[kept]
    if out_format != in_format:
        coords = cand[:, coord_start:coord_start + 4]
        conv = _center(coords) if out_format == "center" else _corners(coords, "center")
        # MXNet converts only the rows whose first coordinate is not negative (meant to skip the -1 rows)
        coords = jnp.where(coords[:, :1] < 0, coords, conv)
        cand = cand.at[:, coord_start:coord_start + 4].set(coords)
    top = jnp.where(keep[:, None], cand, -jnp.ones_like(cand))
    return jnp.concatenate([top, -jnp.ones((n - k, rows.shape[1]), dtype)]) if k < n else top


@op(compile_arrays=("data",))
def box_nms(data, overlap_thresh=0.5, valid_thresh=0.0, topk=-1, coord_start=2, score_index=1, id_index=-1,
            background_id=-1, force_suppress=False, in_format="corner", out_format="corner"):
    """MXNet's non-maximum suppression over the last two axes of ``data`` (boxes, width), per batch item:

    a box is a candidate when its score is above ``valid_thresh`` (and, with ``id_index``, its class is not
    ``background_id``); the ``topk`` best candidates by score (ties: the earlier box; -1: all) are suppressed
    greedily in score order (IoU above ``overlap_thresh`` with a kept, better box of the same class, or any
    class with ``force_suppress``); the kept rows come first in score order, every other row is -1.
    ``topk=0`` returns ``data`` unchanged.  Memory is linear in the boxes times ``topk``."""
    choice("box_nms", "in_format", in_format, ("corner", "center"))
    choice("box_nms", "out_format", out_format, ("corner", "center"))
    x = jnp.asarray(data)
    check(x.ndim >= 2, "box_nms", f"data must have at least 2 dimensions (boxes, width), got shape {x.shape}")
    shape, width = x.shape, x.shape[-1]
    check(width >= 5 + (id_index > 0), "box_nms", f"the last axis must hold a score and 4 coordinates"
          f"{' and the class id' if id_index > 0 else ''}: width {width}")
    check(0 <= score_index < width and not coord_start <= score_index <= coord_start + 3, "box_nms",
          f"score_index {score_index} is out of range (0, {width}) or inside the coordinates")
    check(0 <= coord_start and coord_start + 3 < width, "box_nms",
          f"coordinates ({coord_start}, {coord_start + 3}) out of range (0, {width})")
    check(id_index < 0 or (id_index < width and not coord_start <= id_index <= coord_start + 3
                           and id_index != score_index), "box_nms",
          f"id_index {id_index} is out of range (0, {width}) or clashes with the score or coordinates")
    n = shape[-2]
    k = n if topk < 0 else min(n, topk)
    if k < 1 or x.size == 0:
        return x
    # MXNet's thresholds are float32 parameters, compared in the data's type (the overlap: in float32 at least)
    cmp = jnp.promote_types(x.dtype, jnp.float32)
    valid_thresh = jnp.asarray(np.float32(valid_thresh), x.dtype)
    flat = x.reshape((-1,) + shape[-2:])
    out = jax.vmap(lambda rows: _nms_one(rows, k, (valid_thresh, cmp), jnp.asarray(np.float32(overlap_thresh), cmp),
                                         coord_start, score_index, id_index, background_id, force_suppress,
                                         in_format, out_format))(flat)
    return out.reshape(shape)


box_non_maximum_suppression = box_nms


def _center_size(b):
    return (b[..., 0] + b[..., 2]) / 2, (b[..., 1] + b[..., 3]) / 2, b[..., 2] - b[..., 0], b[..., 3] - b[..., 1]


@op(compile_arrays=("samples", "matches", "anchors", "refs", "means", "stds"))
def box_encode(samples, matches, anchors, refs, means, stds):
    """Regression targets of the positive ``samples`` (1) from their ``anchors`` to the matched ``refs``
    (corner boxes): ``[(dx - m0) / s0, (dy - m1) / s1, (log dw - m2) / s2, (log dh - m3) / s3]``, and the 0/1
    masks; ``[targets, masks]``, both (B, N, 4)."""
    refs, anchors = jnp.asarray(refs), jnp.asarray(anchors)
    idx = jnp.asarray(matches).astype(jnp.int32)
    ref = jnp.take_along_axis(refs, jnp.clip(idx, 0, refs.shape[1] - 1)[..., None], axis=1)
    ax, ay, aw, ah = _center_size(anchors)
    gx, gy, gw, gh = _center_size(ref)
    t = jnp.stack([(gx - ax) / aw, (gy - ay) / ah, jnp.log(gw / aw), jnp.log(gh / ah)], axis=-1)
    t = (t - jnp.asarray(means)) / jnp.asarray(stds)
    pos = (jnp.asarray(samples) > 0.5)[..., None]
    return [jnp.where(pos, t, 0).astype(anchors.dtype), jnp.broadcast_to(pos, t.shape).astype(anchors.dtype)]


@op(compile_arrays=("data", "anchors"))
def box_decode(data, anchors, std0=1.0, std1=1.0, std2=1.0, std3=1.0, clip=-1.0, format="center"):
    """Corner boxes from the deltas ``data`` (B, N, 4) applied to ``anchors`` (1, N, 4) given in
    ``format`` ('center': x, y, w, h; 'corner'); ``clip`` > 0 caps the scaled log sizes."""
    choice("box_decode", "format", format, ("center", "corner"))
    d, a = jnp.asarray(data), jnp.asarray(anchors)
    check(a.ndim == 3 and a.shape[0] == 1, "box_decode", f"anchors must have shape (1, N, 4), got {tuple(a.shape)}")
    if format == "corner":
        ax, ay, aw, ah = _center_size(a)
    else:
        ax, ay, aw, ah = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    dw, dh = d[..., 2] * std2, d[..., 3] * std3
    if clip > 0:
        dw, dh = jnp.minimum(dw, clip), jnp.minimum(dh, clip)
    ox, oy = d[..., 0] * std0 * aw + ax, d[..., 1] * std1 * ah + ay
    ow, oh = jnp.exp(dw) * aw / 2, jnp.exp(dh) * ah / 2
    return jnp.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1).astype(d.dtype)


@op(compile_arrays=("data",))
def bipartite_matching(data, is_ascend=False, threshold=None, topk=-1):
    """Greedy matching on the (N, M) score matrices in the last two axes, as MXNet's kernel does it: pairs in
    score order, a pair of a free row and a free column is matched if its score is strictly better than
    ``threshold``, else the matching stops; ``topk > 0`` stops after topk + 1 matches (MXNet's count).
    ``[row_marker (.., N), col_marker (.., M)]``, -1 where unmatched."""
    check(threshold is not None, "bipartite_matching", "threshold is required")
    x = jnp.asarray(data)
    shape = x.shape
    n, m = shape[-2:]
    flat = x.reshape((-1, n * m))

    def one(scores):
        order = jnp.argsort(scores if is_ascend else -scores, stable=True)

        def step(k, state):
            rows, cols, count, stopped = state
            idx = order[k]
            r, c = idx // m, idx % m
            free = ~stopped & (rows[r] < 0) & (cols[c] < 0)
            good = (scores[idx] < threshold) if is_ascend else (scores[idx] > threshold)
            take = free & good
            count = count + take.astype(jnp.int32)
            stopped = stopped | (free & ~good)
            if topk > 0:
                stopped = stopped | (count > topk)
            rows = rows.at[r].set(jnp.where(take, c, rows[r]))
            cols = cols.at[c].set(jnp.where(take, r, cols[c]))
            return rows, cols, count, stopped

        init = (jnp.full((n,), -1, jnp.int32), jnp.full((m,), -1, jnp.int32), jnp.zeros((), jnp.int32),
                jnp.zeros((), bool))
        rows, cols, _, _ = lax.fori_loop(0, n * m, step, init)
        return rows, cols

    rows, cols = jax.vmap(one)(flat)
    return [rows.reshape(shape[:-1]).astype(x.dtype), cols.reshape(shape[:-2] + (m,)).astype(x.dtype)]


def _c_round(v):
    """C's ``round``: half away from zero (jnp.round goes to even)."""
    return (jnp.sign(v) * jnp.floor(jnp.abs(v) + 0.5)).astype(jnp.int32)


def _roi_boxes(rois, spatial_scale, offset):
    r = jnp.asarray(rois)
    return r[:, 0].astype(jnp.int32), [r[:, i] * spatial_scale - offset for i in range(1, 5)]


@op(compile_arrays=("data", "rois"))
def ROIPooling(data, rois, pooled_size, spatial_scale):
    """Max pooling of each region ``rois[i] = [batch, x1, y1, x2, y2]`` (scaled by ``spatial_scale`` and
    rounded) into ``pooled_size`` bins, as MXNet's ROIPooling: (R, C, ph, pw), empty bins give 0."""
    x = jnp.asarray(data)
    _, _, height, width = x.shape
    ph, pw = as_tuple(pooled_size) if not isinstance(pooled_size, int) else (pooled_size, pooled_size)
    batch, (x1, y1, x2, y2) = _roi_boxes(rois, spatial_scale, 0.0)
    x1, y1, x2, y2 = (_c_round(v) for v in (x1, y1, x2, y2))
    rh = jnp.maximum(y2 - y1 + 1, 1).astype(jnp.float32)
    rw = jnp.maximum(x2 - x1 + 1, 1).astype(jnp.float32)

    def bins(start, size, pooled, limit):
        i = jnp.arange(pooled, dtype=jnp.float32)
        step = divided(size, pooled)[:, None]     # (as C divides: XLA's reciprocal is an ulp off)
        lo = jnp.floor(i[None] * step).astype(jnp.int32) + start[:, None]
        hi = jnp.ceil((i[None] + 1) * step).astype(jnp.int32) + start[:, None]
        return jnp.clip(lo, 0, limit), jnp.clip(hi, 0, limit)

    hs, he = bins(y1, rh, ph, height)
    ws, we = bins(x1, rw, pw, width)
    hh, ww = jnp.arange(height), jnp.arange(width)
    in_h = (hh[None, None] >= hs[..., None]) & (hh[None, None] < he[..., None])       # (R, ph, H)
    in_w = (ww[None, None] >= ws[..., None]) & (ww[None, None] < we[..., None])       # (R, pw, W)
    feats = x[batch]                                                                  # (R, C, H, W)
    neg = jnp.asarray(-jnp.inf, x.dtype)
    over_w = jnp.max(jnp.where(in_w[:, None, None, :, :], feats[:, :, :, None, :], neg), axis=-1)  # (R,C,H,pw)
    out = jnp.max(jnp.where(in_h[:, None, :, :, None], over_w[:, :, None, :, :], neg), axis=3)     # (R,C,ph,pw)
    empty = (he <= hs)[:, None, :, None] | (we <= ws)[:, None, None, :]
    return jnp.where(empty, jnp.zeros((), x.dtype), out)


def _bilinear(feat, y, x):
    """``feat`` (C, H, W) sampled at the points (y, x) with MXNet's ROIAlign border rules."""
    _, height, width = feat.shape
    outside = (y < -1.0) | (y > height) | (x < -1.0) | (x > width)
    y, x = jnp.maximum(y, 0.0), jnp.maximum(x, 0.0)
    y0 = jnp.minimum(jnp.floor(y).astype(jnp.int32), height - 1)
    x0 = jnp.minimum(jnp.floor(x).astype(jnp.int32), width - 1)
    y = jnp.where(y0 >= height - 1, y0.astype(y.dtype), y)
    x = jnp.where(x0 >= width - 1, x0.astype(x.dtype), x)
    y1, x1 = jnp.minimum(y0 + 1, height - 1), jnp.minimum(x0 + 1, width - 1)
    ly, lx = y - y0, x - x0
    hy, hx = 1 - ly, 1 - lx
    v = (hy * hx * feat[:, y0, x0] + hy * lx * feat[:, y0, x1] + ly * hx * feat[:, y1, x0]
         + ly * lx * feat[:, y1, x1])
    return jnp.where(outside, 0.0, v)


def ROIAlign(data, rois, pooled_size, spatial_scale, sample_ratio=-1, position_sensitive=False, aligned=False):
    """ROIAlign (Mask R-CNN): each of the ``pooled_size`` bins of ``rois[i] = [batch, x1, y1, x2, y2]`` is the
    mean of ``sample_ratio`` x ``sample_ratio`` bilinear samples (``sample_ratio <= 0``: MXNet's adaptive
    ``ceil(region size / pooled size)`` per region); (R, C, ph, pw).  ``position_sensitive``: bin (i, j) of
    output channel c reads channel ``(c * ph + i) * pw + j`` (C / (ph * pw) outputs).  No gradient reaches the
    regions (MXNet's)."""
    ph, pw = as_tuple(pooled_size) if not isinstance(pooled_size, int) else (pooled_size, pooled_size)
    grid = None
    if sample_ratio <= 0:       # the largest region's numbers of samples: the program's static grid
        raw = getattr(rois, "_arr", rois)
        if isinstance(raw, jax.core.Tracer) and deferred.computing_shapes_only():
            raw = np.zeros((1, 5), np.float32)       # (infer_shape: the output's shape is the same for any)
        check(not isinstance(raw, jax.core.Tracer), "ROIAlign",
              "sample_ratio <= 0 (adaptive) gives each region a number of samples that depends on its size, "
              "which a compiled program cannot have; pass sample_ratio > 0 (GluonCV uses 2)")
        r = np.asarray(raw, np.float32)
        sizes = [(r[:, 4] - r[:, 2]) * np.float32(spatial_scale), (r[:, 3] - r[:, 1]) * np.float32(spatial_scale)]
        if not aligned:
            sizes = [np.maximum(v, np.float32(1)) for v in sizes]
        grid = tuple(max(1, int(np.ceil(v / np.float32(n)).max(initial=1))) for v, n in zip(sizes, (ph, pw)))
    return _roi_align(data, rois, pooled=(ph, pw), spatial_scale=spatial_scale, sample_ratio=int(sample_ratio),
                      position_sensitive=bool(position_sensitive), aligned=bool(aligned), grid=grid)


@op(compile_arrays=("data", "rois"))
def _roi_align(data, rois, pooled, spatial_scale, sample_ratio, position_sensitive, aligned, grid):
    """ROIAlign on a static grid of samples: ``sample_ratio`` each way, or (adaptive) ``grid`` = the most any
    region takes, each region's own count masking the rest."""
    x = jnp.asarray(data)
    ph, pw = pooled
    batch, (x1, y1, x2, y2) = _roi_boxes(lax.stop_gradient(jnp.asarray(rois)), spatial_scale,
                                         0.5 if aligned else 0.0)
    rw, rh = x2 - x1, y2 - y1
    if not aligned:
        rw, rh = jnp.maximum(rw, 1.0), jnp.maximum(rh, 1.0)
    bin_h, bin_w = divided(rh, ph), divided(rw, pw)
    if grid is None:
        gh = gw = sample_ratio
        count_h = count_w = jnp.full(rh.shape, sample_ratio, jnp.float32)
    else:
        gh, gw = grid
        count_h, count_w = jnp.ceil(divided(rh, ph)), jnp.ceil(divided(rw, pw))

    def points(start, size, count, pooled, g):    # (R, pooled, g) sample positions, and which are the region's
        k = jnp.arange(g, dtype=jnp.float32)
        pos = (start[:, None, None] + jnp.arange(pooled, dtype=jnp.float32)[None, :, None] * size[:, None, None]
               + divided((k[None, None, :] + 0.5) * size[:, None, None], count[:, None, None]))
        return pos, jnp.broadcast_to(k[None, None, :] < count[:, None, None], pos.shape)

    ys, in_y = points(y1, bin_h, count_h, ph, gh)
    xs, in_x = points(x1, bin_w, count_w, pw, gw)
    count = count_h * count_w

    def one(b, yy, xx, my, mx, n):     # yy (ph, gh), xx (pw, gw) -> (C, ph, pw)
        yb, xb = jnp.broadcast_arrays(yy[:, None, :, None], xx[None, :, None, :])
        vals = _bilinear(x[b], yb, xb)          # (C, ph, pw, gh, gw)
        keep = my[:, None, :, None] & mx[None, :, None, :]
        return jnp.where(keep, vals, 0).sum(axis=(-2, -1)) / n

    out = jax.vmap(one)(batch, ys, xs, in_y, in_x, count).astype(x.dtype)
    if position_sensitive:      # bin (i, j) of output channel c: channel (c * ph + i) * pw + j
        c_out = x.shape[1] // (ph * pw)
        out = out.reshape(out.shape[0], c_out, ph, pw, ph, pw)
        out = jnp.einsum("rcijij->rcij", out)
    # MXNet's CPU kernel skips a region whose batch index is negative (GluonCV's FPN pools each level with the
    # other levels' regions masked to -1 rows, then adds the levels): it writes only 0 to the output's FLAT
    # element n (roi n's index, inside the first regions' values), leaving region n's own values unwritten
    # (0 in a fresh output, which is what we give)
    skipped = batch < 0
    out = jnp.where(skipped[:, None, None, None], jnp.zeros((), out.dtype), out)
    flat = out.reshape(-1)
    where = jnp.where(skipped, jnp.arange(out.shape[0]), flat.size)       # flat.size: dropped
    return flat.at[where].set(jnp.zeros((), out.dtype), mode="drop").reshape(out.shape)


@op(compile_arrays=("data", "rois"))
def PSROIPooling(data, rois, spatial_scale, output_dim, pooled_size, group_size=0):
    """Position-sensitive ROI pooling (R-FCN), as MXNet's ``contrib.PSROIPooling``: bin (i, j) of output
    channel o averages ``data``'s channel ``(o * G + gi) * G + gj`` (G = ``group_size``, default
    ``pooled_size``; (gi, gj) the bin's group) over the bin; (R, output_dim, pooled_size, pooled_size).  A
    region is ``[batch, x1, y1, x2, y2]``: its corners rounded, then scaled (the far ones one past), at least
    0.1 wide; an empty bin gives 0.  The bins' sums come from a summed-area table of the data."""
    x = jnp.asarray(data)
    _, channels, height, width = x.shape
    k = int(pooled_size)
    groups = int(group_size) or k
    check(channels == output_dim * groups * groups, "PSROIPooling",
          f"data has {channels} channels; output_dim * group_size**2 = {output_dim * groups * groups} expected")
    r = jnp.asarray(rois)
    ftype = jnp.float64 if x.dtype == jnp.float64 else jnp.float32
    batch = r[:, 0].astype(jnp.int32)
    x1, y1, x2, y2 = (_c_round(r[:, i]).astype(ftype) for i in range(1, 5))
    start_w, start_h = x1 * spatial_scale, y1 * spatial_scale
    size_w = jnp.maximum((x2 + 1) * spatial_scale - start_w, 0.1)
    size_h = jnp.maximum((y2 + 1) * spatial_scale - start_h, 0.1)
    i = jnp.arange(k, dtype=ftype)

    def bins(start, size, limit):        # (R, k) [lo, hi) of each bin, clipped to the map
        step = divided(size, k)[:, None]         # (as C divides: a bin's end lands on the integer it reaches)
        lo = jnp.floor(i[None] * step + start[:, None]).astype(jnp.int32)
        hi = jnp.ceil((i[None] + 1) * step + start[:, None]).astype(jnp.int32)
        return jnp.clip(lo, 0, limit), jnp.clip(hi, 0, limit)

    hs, he = bins(start_h, size_h, height)
    ws, we = bins(start_w, size_w, width)
    group = jnp.clip(jnp.floor(i * groups / k).astype(jnp.int32), 0, groups - 1)
    chan = (jnp.arange(output_dim)[:, None, None] * groups + group[None, :, None]) * groups + group[None, None, :]
    table = jnp.pad(jnp.cumsum(jnp.cumsum(x.astype(ftype), axis=2), axis=3), ((0, 0), (0, 0), (1, 0), (1, 0)))
    b, c = batch[:, None, None, None], chan[None]                       # (R, 1, 1, 1), (1, O, k, k)

    def at(hh, ww):                      # the table at each region's bin corners: (R, O, k, k)
        return table[b, c, hh[:, None, :, None], ww[:, None, None, :]]

    sums = at(he, we) - at(hs, we) - at(he, ws) + at(hs, ws)
    area = ((he - hs)[:, None, :, None] * (we - ws)[:, None, None, :]).astype(ftype)
    empty = area <= 0
    return jnp.where(empty, 0, sums / jnp.where(empty, 1, area)).astype(x.dtype)
