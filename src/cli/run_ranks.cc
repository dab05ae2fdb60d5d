#include "cli/run_ranks.h"

#include <cstdlib>

#include "cli/command.h"
#include "hexplan/exec/mpi_communicator.h"

namespace hx::cli {

std::string RunRanks::Label() const {
  std::string label = "rank " + std::to_string(rank());
  if (static_cast<size_t>(rank()) < nodes.size()) label += " (node " + nodes[rank()] + ")";
  return label;
}

int RunRanks::Fail(const Status& status) const {
  if (comm == nullptr) return ReportError(status);
  comm->Abort("hexplan: error: " + Label() + ": " + status.message(), status.ExitCode());
  return status.ExitCode();  // not reached: Abort ends the process
}

StatusOr<RunRanks> ConnectRanks() {
  RunRanks ranks;
  if (!exec::LaunchedByMpirun()) return ranks;
  if (!exec::MpiTransportBuilt() && exec::MpirunWorldSize() <= 1) return ranks;
  HX_ASSIGN_OR_RETURN(ranks.comm, exec::StartMpiCommunicator());
  return ranks;
}

Status AssignRanks(const hw::Cluster& cluster, RunRanks* ranks) {
  if (!ranks->active()) return Status::Ok();
  std::vector<std::string> nodes;
  std::string listed;
  for (const std::string& node : cluster.NodeNames()) {
    if (cluster.DevicesOfNode(node).empty()) continue;
    listed += (nodes.empty() ? "" : ", ") + node;
    nodes.push_back(node);
  }
  if (static_cast<int>(nodes.size()) != ranks->comm->size())
    return InvalidArgument(
        "mpirun started " + std::to_string(ranks->comm->size()) + " ranks; cluster '" +
        cluster.name() + "' has " + std::to_string(nodes.size()) + " nodes with devices (" +
        listed + "): start one rank per node (mpirun -np " + std::to_string(nodes.size()) + ")");
  ranks->nodes = nodes;
  ranks->device_rank.assign(cluster.num_devices(), 0);
  for (size_t r = 0; r < nodes.size(); ++r)
    for (DeviceId d : cluster.DevicesOfNode(nodes[r]))
      ranks->device_rank[d.index()] = static_cast<int>(r);
  return Status::Ok();
}

namespace {

// Forwards everything to the real backend; the kernel of one op fails.
class FailingOpBackend final : public exec::DeviceBackend {
 public:
  FailingOpBackend(std::unique_ptr<exec::DeviceBackend> inner, std::string op)
      : inner_(std::move(inner)), op_(std::move(op)) {}
  std::string name() const override { return inner_->name(); }
  int num_devices() const override { return inner_->num_devices(); }
  Status BindThread(int d) override { return inner_->BindThread(d); }
  Status BindCopyThread(const std::vector<int>& d) override { return inner_->BindCopyThread(d); }
  bool CopiesOnCallingThread() const override { return inner_->CopiesOnCallingThread(); }
  StatusOr<exec::DeviceBuffer> Allocate(int d, int64_t bytes) override {
    return inner_->Allocate(d, bytes);
  }
  void Free(int d, exec::DeviceBuffer b) override { inner_->Free(d, b); }
  int64_t MemoryInUse(int d) const override { return inner_->MemoryInUse(d); }
  int64_t PeakMemory(int d) const override { return inner_->PeakMemory(d); }
  int64_t Capacity(int d) const override { return inner_->Capacity(d); }
  void ResetPeakMemory() override { inner_->ResetPeakMemory(); }
  Status CopyHostToDevice(int d, const void* src, exec::DeviceBuffer dst, int64_t offset,
                          int64_t bytes) override {
    return inner_->CopyHostToDevice(d, src, dst, offset, bytes);
  }
  Status CopyDeviceToHost(int d, exec::DeviceBuffer src, int64_t offset, void* dst,
                          int64_t bytes) override {
    return inner_->CopyDeviceToHost(d, src, offset, dst, bytes);
  }
  Status CopyDeviceToDevice(int s, exec::DeviceBuffer src, int d, exec::DeviceBuffer dst,
                            int64_t offset, int64_t bytes) override {
    return inner_->CopyDeviceToDevice(s, src, d, dst, offset, bytes);
  }
  bool CanReadHostMemory(int d) const override { return inner_->CanReadHostMemory(d); }
  bool Supports(const graph::Node& op) const override { return inner_->Supports(op); }
  void PrepareGraph(const graph::Graph& graph) override { inner_->PrepareGraph(graph); }
  Status Launch(int d, const graph::Node& op, const std::vector<exec::TensorRef>& in,
                const std::vector<exec::TensorRef>& out) override {
    if (op.name == op_)
      return Internal("op '" + op.name + "': kernel failed (test hook HEXPLAN_TEST_FAIL_OP)");
    return inner_->Launch(d, op, in, out);
  }
  exec::Event RecordEvent(int d) override { return inner_->RecordEvent(d); }
  Status WaitEvent(const exec::Event& e) override { return inner_->WaitEvent(e); }

 private:
  std::unique_ptr<exec::DeviceBackend> inner_;
  std::string op_;
};

}  // namespace

std::unique_ptr<exec::DeviceBackend> WithTestFaults(std::unique_ptr<exec::DeviceBackend> backend) {
  const char* op = std::getenv("HEXPLAN_TEST_FAIL_OP");
  if (op == nullptr || *op == '\0') return backend;
  return std::make_unique<FailingOpBackend>(std::move(backend), op);
}

}  // namespace hx::cli
