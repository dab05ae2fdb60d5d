// ONNX RNN, GRU and (the forms kernels.cc's BLAS LSTM refuses: bidirectional, peepholes,
// layout 1) LSTM, as plain loops in double: every direction, both layouts, initial states, the
// default activations (or the same ones spelled out), sequence_lens. clip and other activations
// are refused naming the attribute.

#include <cmath>
#include <cstring>

#include "exec/kernel_context.h"

namespace hx::exec::internal {
namespace {

enum class Cell : uint8_t { kRnn, kGru, kLstm };

struct RnnDims {
  int64_t S = 0, B = 0, I = 0, H = 0, D = 1, G = 1;
  bool batch_major = false;  // layout 1
  // Element offsets: X[t][b][i], Y[t][d][b][h], Y_h/Y_c/initial states [d][b][h].
  int64_t X(int64_t t, int64_t b, int64_t i) const {
    return batch_major ? (b * S + t) * I + i : (t * B + b) * I + i;
  }
  int64_t Y(int64_t t, int64_t d, int64_t b, int64_t h) const {
    return batch_major ? ((b * S + t) * D + d) * H + h : ((t * D + d) * B + b) * H + h;
  }
  int64_t State(int64_t d, int64_t b, int64_t h) const {
    return batch_major ? (b * D + d) * H + h : (d * B + b) * H + h;
  }
};

double RnnSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

Status CheckAttributes(const Ctx& c, Cell cell) {
  if (c.op.attrs.Has("clip")) return c.Error("attribute clip is unsupported");
  if (c.op.attrs.Has("activation_alpha") || c.op.attrs.Has("activation_beta"))
    return c.Error("attributes activation_alpha/activation_beta are unsupported");
  if (c.op.attrs.Has("activations")) {
    const std::string acts = c.op.attrs.GetString("activations", "");
    const std::string dflt = cell == Cell::kRnn   ? "Tanh"
                             : cell == Cell::kGru ? "Sigmoid,Tanh"
                                                  : "Sigmoid,Tanh,Tanh";
    if (acts != dflt && acts != dflt + "," + dflt)
      return c.Error("attribute activations '" + acts + "' is unsupported (only the defaults)");
  }
  if (c.op.attrs.GetInt("input_forget", 0) != 0) return c.Error("input_forget=1 is unsupported");
  return Status::Ok();
}

StatusOr<RnnDims> Dims(const Ctx& c, Cell cell) {
  RnnDims d;
  d.G = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
  const std::string dir = c.op.attrs.GetString("direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return c.Error("unknown direction '" + dir + "'");
  d.D = dir == "bidirectional" ? 2 : 1;
  d.batch_major = c.op.attrs.GetInt("layout", 0) != 0;
  const Shape& x = *c.in[0].shape;
  const Shape& r = *c.in[2].shape;
  if (x.size() != 3 || r.size() != 3) return c.Error("X and R must be 3-D");
  d.S = d.batch_major ? x[1] : x[0];
  d.B = d.batch_major ? x[0] : x[1];
  d.I = x[2];
  d.H = r[2];
  if (*c.in[1].shape != Shape{d.D, d.G * d.H, d.I} || r != Shape{d.D, d.G * d.H, d.H})
    return c.Error("W or R shape does not match the direction and hidden size");
  return d;
}

// One direction's gate pre-activations for batch row b: x W^T + Wb (+ h R^T + Rb unless the
// GRU's reset gate must see h R^T separately, which `hr` receives).
struct Weights {
  const TensorRef *W, *R, *Bias, *P;
};

double Dot(const TensorRef& m, int64_t row, int64_t n, const std::vector<double>& v,
           int64_t vbase) {
  double acc = 0.0;
  for (int64_t k = 0; k < n; ++k) acc += Load(m, row * n + k) * v[static_cast<size_t>(vbase + k)];
  return acc;
}

double Bias(const Weights& w, int64_t d, int64_t j, const RnnDims& dm, bool recurrent) {
  if (w.Bias == nullptr) return 0.0;
  return Load(*w.Bias, d * 2 * dm.G * dm.H + (recurrent ? dm.G * dm.H : 0) + j);
}

// Runs one direction over the sequence, updating h (and cell state cs for LSTM) in place.
// `lens`: each batch row's sequence length (sequence_lens; S when absent). Steps past a row's
// length leave its state as it is and its Y zero.
void RunDirection(const Ctx& c, Cell cell, const RnnDims& dm, const Weights& w, int64_t d,
                  const std::vector<int64_t>& lens, std::vector<double>* h,
                  std::vector<double>* cs) {
  const bool reverse = d == 1 || c.op.attrs.GetString("direction", "forward") == "reverse";
  const bool lbr = c.op.attrs.GetInt("linear_before_reset", 0) != 0;
  const int64_t GH = dm.G * dm.H;
  std::vector<double> x(static_cast<size_t>(dm.I)), xg(static_cast<size_t>(GH)),
      hg(static_cast<size_t>(GH));
  for (int64_t step = 0; step < dm.S; ++step) {
    std::vector<double> next = *h;
    for (int64_t b = 0; b < dm.B; ++b) {
      const int64_t len = lens[static_cast<size_t>(b)];
      if (step >= len) continue;
      const int64_t t = reverse ? len - 1 - step : step;
      for (int64_t i = 0; i < dm.I; ++i) x[static_cast<size_t>(i)] = Load(c.in[0], dm.X(t, b, i));
      for (int64_t j = 0; j < GH; ++j) {
        xg[static_cast<size_t>(j)] = Dot(*w.W, d * GH + j, dm.I, x, 0) + Bias(w, d, j, dm, false);
        hg[static_cast<size_t>(j)] =
            Dot(*w.R, d * GH + j, dm.H, *h, b * dm.H) + Bias(w, d, j, dm, true);
      }
      for (int64_t k = 0; k < dm.H; ++k) {
        const size_t hk = static_cast<size_t>(b * dm.H + k);
        auto g = [&](int64_t gate) {
          return xg[static_cast<size_t>(gate * dm.H + k)] +
                 hg[static_cast<size_t>(gate * dm.H + k)];
        };
        if (cell == Cell::kRnn) {
          next[hk] = std::tanh(g(0));
        } else if (cell == Cell::kGru) {
          const double z = RnnSigmoid(g(0)), r = RnnSigmoid(g(1));
          double hh;
          if (lbr) {
            hh = std::tanh(xg[static_cast<size_t>(2 * dm.H + k)] +
                           r * hg[static_cast<size_t>(2 * dm.H + k)]);
          } else {  // (r * h) R_h^T + Rb_h
            double acc = Bias(w, d, 2 * dm.H + k, dm, true);
            for (int64_t q = 0; q < dm.H; ++q) {
              const double rq =
                  RnnSigmoid(xg[static_cast<size_t>(dm.H + q)] + hg[static_cast<size_t>(dm.H + q)]);
              acc += Load(*w.R, (d * GH + 2 * dm.H + k) * dm.H + q) * rq *
                     (*h)[static_cast<size_t>(b * dm.H + q)];
            }
            hh = std::tanh(xg[static_cast<size_t>(2 * dm.H + k)] + acc);
          }
          next[hk] = (1 - z) * hh + z * (*h)[hk];
        } else {  // LSTM gates i, o, f, c; peepholes P = [pi, po, pf]
          const double cprev = (*cs)[hk];
          auto peep = [&](int64_t p) {
            return w.P == nullptr ? 0.0 : Load(*w.P, d * 3 * dm.H + p * dm.H + k);
          };
          const double ig = RnnSigmoid(g(0) + peep(0) * cprev),
                       fg = RnnSigmoid(g(2) + peep(2) * cprev);
          const double cc = fg * cprev + ig * std::tanh(g(3));
          const double og = RnnSigmoid(g(1) + peep(1) * cc);
          (*cs)[hk] = cc;
          next[hk] = og * std::tanh(cc);
        }
      }
    }
    *h = next;
    for (int64_t b = 0; b < dm.B && c.HasOut(0); ++b) {
      const int64_t len = lens[static_cast<size_t>(b)];
      if (step >= len) continue;
      const int64_t t = reverse ? len - 1 - step : step;
      for (int64_t k = 0; k < dm.H; ++k)
        Store(c.out[0], dm.Y(t, d, b, k), (*h)[static_cast<size_t>(b * dm.H + k)]);
    }
  }
}

Status RecurrentKernel(const Ctx& c, Cell cell) {
  for (size_t k = 0; k < 3; ++k)
    if (!c.Has(k)) return c.Error("needs X, W and R");
  HX_RETURN_IF_ERROR(CheckAttributes(c, cell));
  HX_ASSIGN_OR_RETURN(RnnDims dm, Dims(c, cell));
  const size_t state_in = 5, cell_in = 6, peep_in = 7;
  Weights w{&c.in[1], &c.in[2], c.Has(3) ? &c.in[3] : nullptr,
            cell == Cell::kLstm && c.Has(peep_in) ? &c.in[peep_in] : nullptr};
  HX_ASSIGN_OR_RETURN(std::vector<int64_t> lens, IntsOf(c, 4));
  if (lens.empty()) lens.assign(static_cast<size_t>(dm.B), dm.S);
  if (static_cast<int64_t>(lens.size()) != dm.B)
    return c.Error("sequence_lens must have B entries");
  for (int64_t len : lens)
    if (len < 0 || len > dm.S) return c.Error("a sequence_lens entry is out of range");
  if (c.HasOut(0))  // rows shorter than the sequence leave zeros
    for (int64_t i = 0; i < c.out[0].NumElements(); ++i) Store(c.out[0], i, 0.0);
  for (int64_t d = 0; d < dm.D; ++d) {
    std::vector<double> h(static_cast<size_t>(dm.B * dm.H), 0.0), cs = h;
    for (int64_t b = 0; b < dm.B; ++b)
      for (int64_t k = 0; k < dm.H; ++k) {
        const size_t at = static_cast<size_t>(b * dm.H + k);
        if (c.Has(state_in)) h[at] = Load(c.in[state_in], dm.State(d, b, k));
        if (cell == Cell::kLstm && c.Has(cell_in)) cs[at] = Load(c.in[cell_in], dm.State(d, b, k));
      }
    RunDirection(c, cell, dm, w, d, lens, &h, &cs);
    for (int64_t b = 0; b < dm.B; ++b)
      for (int64_t k = 0; k < dm.H; ++k) {
        const size_t at = static_cast<size_t>(b * dm.H + k);
        if (c.HasOut(1)) Store(c.out[1], dm.State(d, b, k), h[at]);
        if (cell == Cell::kLstm && c.HasOut(2)) Store(c.out[2], dm.State(d, b, k), cs[at]);
      }
  }
  return Status::Ok();
}

}  // namespace

void AddRecurrentKernels(KernelMap* map) {
  KernelMap& m = *map;
  m["RNN"] = [](const Ctx& c) { return RecurrentKernel(c, Cell::kRnn); };
  m["GRU"] = [](const Ctx& c) { return RecurrentKernel(c, Cell::kGru); };
  // kernels.cc's BLAS LSTM covers layout 0, one direction, no peepholes; the rest runs here.
  Kernel blas = m["LSTM"];
  m["LSTM"] = [blas](const Ctx& c) {
    const bool simple = c.op.attrs.GetString("direction", "forward") != "bidirectional" &&
                        c.op.attrs.GetInt("layout", 0) == 0 && !c.Has(4) && !c.Has(7) &&
                        !c.op.attrs.Has("activations") && !c.op.attrs.Has("clip") &&
                        !c.op.attrs.Has("activation_alpha") && !c.op.attrs.Has("activation_beta") &&
                        c.op.attrs.GetInt("input_forget", 0) == 0 && c.in[0].dtype == DType::kF32;
    return simple ? blas(c) : RecurrentKernel(c, Cell::kLstm);
  };
}

}  // namespace hx::exec::internal
