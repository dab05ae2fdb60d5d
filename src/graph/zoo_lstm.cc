// Chrion's stacked LSTM unrolled into cells, as torch.onnx exports an nn.LSTMCell loop: per layer
// and time step, gates = (x W_ih + b_ih) + (h W_hh + b_hh), Split into i, f, g, o, then c' =
// sigmoid(f) * c + sigmoid(i) * tanh(g) and h' = sigmoid(o) * tanh(c'). A layer's weights are one
// set of weight nodes read by every cell of that layer.

#include "zoo_builder.h"

namespace hx::graph::zoo_internal {

Graph BuildLstm(const ZooOptions& o) {
  const int64_t L = o.lstm_layers, H = o.lstm_io, S = o.seq, B = o.batch;
  ZooBuilder b("lstm", o.dtype);
  TensorId x = b.Input("input", o.dtype, {S, B, H});
  TensorId h0 = b.Input("h0", o.dtype, {L, B, H});
  TensorId c0 = b.Input("c0", o.dtype, {L, B, H});
  struct LayerWeights {
    TensorId w_ih, w_hh, b_ih, b_hh;
  };
  std::vector<LayerWeights> weights;
  for (int64_t l = 0; l < L; ++l) {
    const std::string p = "lstm.cell" + std::to_string(l);
    weights.push_back({b.Weight(p + ".weight_ih", {H, 4 * H}),
                       b.Weight(p + ".weight_hh", {H, 4 * H}), b.Weight(p + ".bias_ih", {4 * H}),
                       b.Weight(p + ".bias_hh", {4 * H})});
  }
  auto scalar_index = [&](int64_t i) {
    Attributes attrs;
    attrs.Set("value_int", i);
    return b.Op("Constant", {}, {}, std::move(attrs), DType::kI64);
  };
  std::vector<TensorId> h(static_cast<size_t>(L)), c(static_cast<size_t>(L));
  b.SetScope("lstm");
  for (int64_t l = 0; l < L; ++l) {
    TensorId index = scalar_index(l);
    h[l] = b.Gather(h0, index, 0);
    c[l] = b.Gather(c0, index, 0);
  }
  std::vector<TensorId> outputs;
  for (int64_t t = 0; t < S; ++t) {
    b.SetScope("lstm/step" + std::to_string(t));
    TensorId in = b.Gather(x, scalar_index(t), 0);  // [B, H]
    for (int64_t l = 0; l < L; ++l) {
      b.SetScope("lstm/step" + std::to_string(t) + "/cell" + std::to_string(l));
      const LayerWeights& w = weights[static_cast<size_t>(l)];
      TensorId gx = b.Binary("Add", b.MatMul(in, w.w_ih), w.b_ih);
      TensorId gh = b.Binary("Add", b.MatMul(h[l], w.w_hh), w.b_hh);
      std::vector<TensorId> g = b.Split(b.Binary("Add", gx, gh), 1, {H, H, H, H});
      TensorId i_gate = b.Unary("Sigmoid", g[0]);
      TensorId f_gate = b.Unary("Sigmoid", g[1]);
      TensorId g_gate = b.Unary("Tanh", g[2]);
      TensorId o_gate = b.Unary("Sigmoid", g[3]);
      c[l] = b.Binary("Add", b.Binary("Mul", f_gate, c[l]), b.Binary("Mul", i_gate, g_gate));
      h[l] = b.Binary("Mul", o_gate, b.Unary("Tanh", c[l]));
      in = h[l];
    }
    outputs.push_back(b.Unsqueeze(in, {0}));
  }
  b.SetScope("lstm");
  b.Output(outputs.size() == 1 ? outputs[0] : b.Concat(outputs, 0));
  return b.Finish();
}

}  // namespace hx::graph::zoo_internal
