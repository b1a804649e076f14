// oneDNN's 2-D convolutions (forward, input gradient, weight gradient) as XLA FFI handlers, for
// ast_hybrid/xla/onednn.py, which compiles this file against the oneDNN it finds and registers the handlers.
//
// Arrays are as XLA holds them, row-major: activations N,H,W,C; kernels H,W,I,O (O = groups x O/groups, the
// group the slower index, as XLA's feature_group_count); float32.  Each primitive is created once per shape and
// options (a cache under a mutex, at most 1024 of them) with its weights in the layout oneDNN prefers; the kernel
// is reordered into it at each call (the weight gradient out of it), the activations stay NHWC.
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <omp.h>

#include "oneapi/dnnl/dnnl.hpp"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;
using dnnl::memory;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

namespace {

enum Kind : int64_t { kForward = 0, kData = 1, kWeights = 2 };

struct Entry {
  memory::desc src, wei, dst;   // the arrays as XLA holds them
  memory::desc wei_prim;        // the kernel (or its gradient) in the primitive's layout
  memory::desc scratch;         // the primitive's scratchpad (user-managed: one per call, no state shared)
  dnnl::primitive prim;
  dnnl::reorder reorder;        // the kernel into wei_prim (the weight gradient out of it); unset when equal
  std::string impl;
};

dnnl::engine& Engine() {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

constexpr size_t kMaxPrimitives = 1024;

std::mutex& Mutex() {
  static std::mutex mu;
  return mu;
}

std::map<std::vector<int64_t>, std::shared_ptr<Entry>>& Cache() {
  static std::map<std::vector<int64_t>, std::shared_ptr<Entry>> cache;
  return cache;
}

// The OpenMP threads a primitive is made and run with (0: OpenMP's own setting, OMP_NUM_THREADS or every core), on
// the calling thread (XLA's) only; the caller's own setting is back when it goes.
class Threads {
 public:
  explicit Threads(int64_t n) : before_(n > 0 ? omp_get_max_threads() : 0) {
    if (n > 0) omp_set_num_threads(int(n));
  }
  ~Threads() {
    if (before_ > 0) omp_set_num_threads(before_);
  }

 private:
  int before_;
};

// x4: N H W C, w4: KH KW I O, y4: N OH OW O; geometry: strides, dilation (XLA's: 1 = dense), padding low/high.
std::shared_ptr<Entry> Get(int64_t kind, const int64_t* x4, const int64_t* w4, const int64_t* y4, int64_t groups,
                           const int64_t* st, const int64_t* dil, const int64_t* pl, const int64_t* pr,
                           int64_t threads) {
  Threads team(threads);
  std::vector<int64_t> key{kind, groups, threads};
  for (const int64_t* p : {x4, w4, y4}) key.insert(key.end(), p, p + 4);
  for (const int64_t* p : {st, dil, pl, pr}) key.insert(key.end(), p, p + 2);
  {
    std::lock_guard<std::mutex> lock(Mutex());
    auto it = Cache().find(key);
    if (it != Cache().end()) return it->second;
  }
  memory::dims xd{x4[0], x4[3], x4[1], x4[2]}, yd{y4[0], y4[3], y4[1], y4[2]}, wd;
  if (groups > 1) wd = {groups, w4[3] / groups, w4[2], w4[0], w4[1]};
  else wd = {w4[3], w4[2], w4[0], w4[1]};
  memory::dims strides{st[0], st[1]}, dilates{dil[0] - 1, dil[1] - 1}, pad_l{pl[0], pl[1]}, pad_r{pr[0], pr[1]};
  auto e = std::make_shared<Entry>();
  auto& eng = Engine();
  e->src = memory::desc(xd, dt::f32, tag::nhwc);
  e->dst = memory::desc(yd, dt::f32, tag::nhwc);
  e->wei = memory::desc(wd, dt::f32, groups > 1 ? tag::hwigo : tag::hwio);
  memory::desc any(wd, dt::f32, tag::any);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  auto fwd = dnnl::convolution_forward::primitive_desc(eng, dnnl::prop_kind::forward_training,
                                                       dnnl::algorithm::convolution_direct, e->src, any, e->dst,
                                                       strides, dilates, pad_l, pad_r, attr);
  if (kind == kForward) {
    e->wei_prim = fwd.weights_desc();
    e->scratch = fwd.scratchpad_desc();
    e->prim = dnnl::convolution_forward(fwd);
    e->impl = fwd.impl_info_str();
  } else if (kind == kData) {
    auto pd = dnnl::convolution_backward_data::primitive_desc(eng, dnnl::algorithm::convolution_direct, e->src, any,
                                                               e->dst, strides, dilates, pad_l, pad_r, fwd, attr);
    e->wei_prim = pd.weights_desc();
    e->scratch = pd.scratchpad_desc();
    e->prim = dnnl::convolution_backward_data(pd);
    e->impl = pd.impl_info_str();
  } else {
    auto pd = dnnl::convolution_backward_weights::primitive_desc(
        eng, dnnl::algorithm::convolution_direct, e->src, any, e->dst, strides, dilates, pad_l, pad_r, fwd, attr);
    e->wei_prim = pd.diff_weights_desc();
    e->scratch = pd.scratchpad_desc();
    e->prim = dnnl::convolution_backward_weights(pd);
    e->impl = pd.impl_info_str();
  }
  if (e->wei_prim != e->wei) {
    dnnl::primitive_attr plain;
    plain.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto pd = kind == kWeights ? dnnl::reorder::primitive_desc(eng, e->wei_prim, eng, e->wei, plain)
                               : dnnl::reorder::primitive_desc(eng, e->wei, eng, e->wei_prim, plain);
    if (pd.scratchpad_desc().get_size() != 0) throw dnnl::error(dnnl_unimplemented, "a reorder with a scratchpad");
    e->reorder = dnnl::reorder(pd);
  }
  std::lock_guard<std::mutex> lock(Mutex());
  // bounded: code run on ever new shapes would keep a primitive (its generated code) for each; a call in flight
  // keeps its own by its shared_ptr
  if (Cache().size() >= kMaxPrimitives) Cache().clear();
  return Cache().emplace(key, e).first->second;
}

// a: x (forward, weights) or dy (data); b: w (forward, data) or dy (weights); out: y, dx or dw.
ffi::Error Run(Kind kind, ffi::Span<const int64_t> x4, ffi::Span<const int64_t> w4, ffi::Span<const int64_t> y4,
               int64_t groups, ffi::Span<const int64_t> st, ffi::Span<const int64_t> dil,
               ffi::Span<const int64_t> pl, ffi::Span<const int64_t> pr, int64_t threads, const float* a,
               const float* b, float* out) {
  if (x4.size() != 4 || w4.size() != 4 || y4.size() != 4 || st.size() != 2 || dil.size() != 2 || pl.size() != 2 ||
      pr.size() != 2)
    return ffi::Error(ffi::ErrorCode::kInvalidArgument, "oneDNN convolution: 2-D NHWC/HWIO arrays expected");
  try {
    auto e = Get(kind, x4.begin(), w4.begin(), y4.begin(), groups, st.begin(), dil.begin(), pl.begin(), pr.begin(),
                 threads);
    Threads team(threads);
    auto& eng = Engine();
    dnnl::stream s(eng);
    const bool reorder = e->wei_prim != e->wei;
    auto in = [](const float* p) { return const_cast<float*>(p); };
    memory scratch(e->scratch, eng);
    if (kind == kWeights) {
      memory x(e->src, eng, in(a)), dy(e->dst, eng, in(b)), dw(e->wei, eng, out);
      memory prim_dw = reorder ? memory(e->wei_prim, eng) : dw;
      e->prim.execute(s, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_WEIGHTS, prim_dw},
                          {DNNL_ARG_SCRATCHPAD, scratch}});
      if (reorder) e->reorder.execute(s, prim_dw, dw);
    } else {
      memory w(e->wei, eng, in(b));
      memory prim_w = reorder ? memory(e->wei_prim, eng) : w;
      if (reorder) e->reorder.execute(s, w, prim_w);
      if (kind == kForward) {
        memory x(e->src, eng, in(a)), y(e->dst, eng, out);
        e->prim.execute(s, {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, prim_w}, {DNNL_ARG_DST, y},
                            {DNNL_ARG_SCRATCHPAD, scratch}});
      } else {
        memory dy(e->dst, eng, in(a)), dx(e->src, eng, out);
        e->prim.execute(s, {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_WEIGHTS, prim_w}, {DNNL_ARG_DIFF_SRC, dx},
                            {DNNL_ARG_SCRATCHPAD, scratch}});
      }
    }
    s.wait();
  } catch (const dnnl::error& err) {
    return ffi::Error(ffi::ErrorCode::kInternal, std::string("oneDNN convolution: ") + err.what());
  }
  return ffi::Error::Success();
}

using F32 = ffi::Buffer<ffi::F32>;
using Ints = ffi::Span<const int64_t>;

ffi::Error Forward(F32 x, F32 w, ffi::ResultBuffer<ffi::F32> y, int64_t groups, Ints st, Ints dil, Ints pl, Ints pr,
                   int64_t threads) {
  return Run(kForward, x.dimensions(), w.dimensions(), y->dimensions(), groups, st, dil, pl, pr, threads,
             x.typed_data(), w.typed_data(), y->typed_data());
}

ffi::Error Data(F32 dy, F32 w, ffi::ResultBuffer<ffi::F32> dx, int64_t groups, Ints st, Ints dil, Ints pl, Ints pr,
                int64_t threads) {
  return Run(kData, dx->dimensions(), w.dimensions(), dy.dimensions(), groups, st, dil, pl, pr, threads,
             dy.typed_data(), w.typed_data(), dx->typed_data());
}

ffi::Error Weights(F32 x, F32 dy, ffi::ResultBuffer<ffi::F32> dw, int64_t groups, Ints st, Ints dil, Ints pl,
                   Ints pr, int64_t threads) {
  return Run(kWeights, x.dimensions(), dw->dimensions(), dy.dimensions(), groups, st, dil, pl, pr, threads,
             x.typed_data(), dy.typed_data(), dw->typed_data());
}

}  // namespace

#define AH_BINDING                                                                                 \
  ffi::Ffi::Bind().Arg<F32>().Arg<F32>().Ret<F32>().Attr<int64_t>("groups").Attr<Ints>("strides") \
      .Attr<Ints>("dilation").Attr<Ints>("pad_lo").Attr<Ints>("pad_hi").Attr<int64_t>("threads")

XLA_FFI_DEFINE_HANDLER_SYMBOL(ah_onednn_conv_forward, Forward, AH_BINDING);
XLA_FFI_DEFINE_HANDLER_SYMBOL(ah_onednn_conv_data, Data, AH_BINDING);
XLA_FFI_DEFINE_HANDLER_SYMBOL(ah_onednn_conv_weights, Weights, AH_BINDING);

// Create (and keep) the primitive for one convolution; write its implementation's name (or why oneDNN has none)
// into buf.  Returns 0 when there is one.  Called when a program is traced, so that a convolution oneDNN cannot
// compute stays XLA's.
extern "C" int ah_onednn_prepare(int64_t kind, const int64_t* x4, const int64_t* w4, const int64_t* y4,
                                 int64_t groups, const int64_t* st, const int64_t* dil, const int64_t* pl,
                                 const int64_t* pr, int64_t threads, char* buf, int64_t n) {
  try {
    auto e = Get(kind, x4, w4, y4, groups, st, dil, pl, pr, threads);
    std::snprintf(buf, n, "%s", e->impl.c_str());
    return 0;
  } catch (const dnnl::error& err) {
    std::snprintf(buf, n, "%s", err.what());
    return 1;
  }
}

extern "C" int64_t ah_onednn_cached() {
  std::lock_guard<std::mutex> lock(Mutex());
  return int64_t(Cache().size());
}

extern "C" void ah_onednn_version(char* buf, int64_t n) {
  const dnnl_version_t* v = dnnl_version();
  std::snprintf(buf, n, "%d.%d.%d", v->major, v->minor, v->patch);
}
