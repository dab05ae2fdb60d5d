#include "hexplan/exec/mpi_communicator.h"

// The C API only (Open MPI's deprecated C++ bindings do not compile warning-free).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

namespace hx::exec {

namespace {

// What an MPI error code means, for messages.
std::string MpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, static_cast<size_t>(length));
}

Status MpiCallStatus(int code, const std::string& what) {
  if (code == MPI_SUCCESS) return Status::Ok();
  return Internal("mpi: " + what + ": " + MpiErrorText(code));
}

// The element count an MPI call takes (an int).
Status CheckMpiCount(int64_t count, const std::string& what) {
  if (count < 0 || count > INT_MAX)
    return InvalidArgument("mpi: " + what + ": " + std::to_string(count) +
                           " elements, over MPI's limit of " + std::to_string(INT_MAX) +
                           " per message");
  return Status::Ok();
}

}  // namespace

bool MpiTransportBuilt() { return true; }

StatusOr<std::unique_ptr<Communicator>> StartMpiCommunicator() {
  HX_ASSIGN_OR_RETURN(std::unique_ptr<MpiCommunicator> c, MpiCommunicator::Create());
  return std::unique_ptr<Communicator>(std::move(c));
}

struct MpiCommunicator::State {
  std::mutex mu;  // every MPI call
  int rank = 0;
  int size = 1;
  std::string all_reduce_algorithm;
  int tag_upper_bound = 32767;  // MPI guarantees at least this
  std::map<RankGroup, MPI_Comm> groups;

  // Polls `request` (taking the lock for each MPI_Test) until it completes.
  Status WaitRequest(MPI_Request* request, const std::string& what) {
    for (uint32_t k = 0;; ++k) {
      int done = 0;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (int code = MPI_Test(request, &done, MPI_STATUS_IGNORE); code != MPI_SUCCESS)
          return MpiCallStatus(code, what);
      }
      if (done) return Status::Ok();
      if (k < 64)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  StatusOr<MPI_Comm> CommOf(const RankGroup& group);
};

namespace {

class MpiPendingTransfer final : public PendingTransfer {
 public:
  MpiPendingTransfer(MpiCommunicator::State* state, MPI_Request request, bool receive,
                     std::string what)
      : state_(state), request_(request), receive_(receive), what_(std::move(what)) {}
  ~MpiPendingTransfer() override {
    if (request_ == MPI_REQUEST_NULL) return;
    // Dropped before it completed (a failed run): a receive must not write into a freed buffer.
    std::lock_guard<std::mutex> lock(state_->mu);
    if (receive_) {
      MPI_Cancel(&request_);
      MPI_Wait(&request_, MPI_STATUS_IGNORE);
    } else {
      MPI_Request_free(&request_);
    }
  }
  Status Wait() override {
    if (request_ == MPI_REQUEST_NULL) return Status::Ok();
    return state_->WaitRequest(&request_, what_);
  }
  bool Done() override {
    if (request_ == MPI_REQUEST_NULL) return true;
    int done = 0;
    std::lock_guard<std::mutex> lock(state_->mu);
    if (MPI_Test(&request_, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return true;  // Wait says
    return done != 0;
  }

 private:
  MpiCommunicator::State* state_;
  MPI_Request request_;
  bool receive_;
  std::string what_;
};

}  // namespace

StatusOr<std::unique_ptr<MpiCommunicator>> MpiCommunicator::Create() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return Internal("mpi: MPI is initialised already (one communicator a process)");
#ifdef OPEN_MPI
  // Open MPI's non-blocking collectives (libnbc) all-reduce below four ranks by reducing to one
  // rank and broadcasting back: the whole buffer crosses one way, then the other, twice a ring's
  // time for large buffers (two ranks, 64 MiB over a 1 Gbit/s link: 1155 ms against 567 ms).
  // The ring is also what the alpha-beta model prices (NCCL's algorithm); a user's own
  // OMPI_MCA_coll_libnbc_iallreduce_algorithm stays.
  setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "ring", /*overwrite=*/0);
#endif
  int provided = 0;
  if (int code = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
      code != MPI_SUCCESS)
    return MpiCallStatus(code, "MPI_Init_thread");
  std::unique_ptr<MpiCommunicator> c(new MpiCommunicator());
  c->state_ = std::make_unique<State>();
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    return Internal("mpi: the library provides thread level " + std::to_string(provided) +
                    ", the executor needs MPI_THREAD_SERIALIZED or more");
  }
  if (const char* algorithm = std::getenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm"))
    c->state_->all_reduce_algorithm = algorithm;
  // Errors come back as codes (turned into Status) rather than ending the process.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &c->state_->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c->state_->size);
  void* upper = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &upper, &found);
  if (found && upper != nullptr) c->state_->tag_upper_bound = *static_cast<int*>(upper);
  return c;
}

MpiCommunicator::~MpiCommunicator() {
  if (state_ == nullptr) return;
  for (auto& [group, comm] : state_->groups)
    if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  MPI_Finalize();
}

int MpiCommunicator::rank() const { return state_->rank; }
int MpiCommunicator::size() const { return state_->size; }

StatusOr<std::unique_ptr<PendingTransfer>> MpiCommunicator::PostSend(int destination, int tag,
                                                                     const void* data,
                                                                     int64_t bytes) {
  const std::string what = "send to rank " + std::to_string(destination) + " (tag " +
                           std::to_string(tag) + ", " + std::to_string(bytes) + " bytes)";
  if (destination < 0 || destination >= state_->size || tag < 0 || tag > state_->tag_upper_bound)
    return InvalidArgument("mpi: " + what + ": no such rank or tag (tags 0.." +
                           std::to_string(state_->tag_upper_bound) + ")");
  HX_RETURN_IF_ERROR(CheckMpiCount(bytes, what));
  MPI_Request request = MPI_REQUEST_NULL;
  std::lock_guard<std::mutex> lock(state_->mu);
  HX_RETURN_IF_ERROR(MpiCallStatus(MPI_Isend(data, static_cast<int>(bytes), MPI_BYTE, destination,
                                             tag, MPI_COMM_WORLD, &request),
                                   what));
  return std::unique_ptr<PendingTransfer>(
      new MpiPendingTransfer(state_.get(), request, /*receive=*/false, what));
}

StatusOr<std::unique_ptr<PendingTransfer>> MpiCommunicator::PostReceive(int source, int tag,
                                                                        void* data, int64_t bytes) {
  const std::string what = "receive from rank " + std::to_string(source) + " (tag " +
                           std::to_string(tag) + ", " + std::to_string(bytes) + " bytes)";
  if (source < 0 || source >= state_->size || tag < 0 || tag > state_->tag_upper_bound)
    return InvalidArgument("mpi: " + what + ": no such rank or tag (tags 0.." +
                           std::to_string(state_->tag_upper_bound) + ")");
  HX_RETURN_IF_ERROR(CheckMpiCount(bytes, what));
  MPI_Request request = MPI_REQUEST_NULL;
  std::lock_guard<std::mutex> lock(state_->mu);
  HX_RETURN_IF_ERROR(MpiCallStatus(
      MPI_Irecv(data, static_cast<int>(bytes), MPI_BYTE, source, tag, MPI_COMM_WORLD, &request),
      what));
  return std::unique_ptr<PendingTransfer>(
      new MpiPendingTransfer(state_.get(), request, /*receive=*/true, what));
}

StatusOr<MPI_Comm> MpiCommunicator::State::CommOf(const RankGroup& group) {
  const std::string what = "group of " + std::to_string(group.size()) + " ranks";
  bool member = false;
  for (size_t i = 0; i < group.size(); ++i) {
    if (group[i] < 0 || group[i] >= size || (i > 0 && group[i] <= group[i - 1]))
      return InvalidArgument("mpi: " + what + ": ranks must be ascending, unique, in 0.." +
                             std::to_string(size - 1));
    member = member || group[i] == rank;
  }
  if (!member)
    return InvalidArgument("mpi: rank " + std::to_string(rank) + " is not in the " + what);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = groups.find(group); it != groups.end()) return it->second;
  MPI_Group world = MPI_GROUP_NULL, sub = MPI_GROUP_NULL;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, static_cast<int>(group.size()), group.data(), &sub);
  MPI_Comm comm = MPI_COMM_NULL;
  // The tag tells apart creations that run at once on overlapping groups.
  const int code = MPI_Comm_create_group(MPI_COMM_WORLD, sub, 0, &comm);
  MPI_Group_free(&sub);
  MPI_Group_free(&world);
  HX_RETURN_IF_ERROR(MpiCallStatus(code, "MPI_Comm_create_group (" + what + ")"));
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  groups[group] = comm;
  return comm;
}

std::string MpiCommunicator::all_reduce_algorithm() const { return state_->all_reduce_algorithm; }

Status MpiCommunicator::AllReduceSum(const RankGroup& group, float* data, int64_t count) {
  HX_RETURN_IF_ERROR(CheckMpiCount(count, "all-reduce"));
  HX_ASSIGN_OR_RETURN(MPI_Comm comm, state_->CommOf(group));
  MPI_Request request = MPI_REQUEST_NULL;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    HX_RETURN_IF_ERROR(MpiCallStatus(MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count),
                                                    MPI_FLOAT, MPI_SUM, comm, &request),
                                     "all-reduce"));
  }
  return state_->WaitRequest(&request, "all-reduce");
}

Status MpiCommunicator::AllGather(const RankGroup& group, const float* send, int64_t count_per_rank,
                                  float* receive) {
  HX_RETURN_IF_ERROR(CheckMpiCount(count_per_rank, "all-gather"));
  HX_ASSIGN_OR_RETURN(MPI_Comm comm, state_->CommOf(group));
  MPI_Request request = MPI_REQUEST_NULL;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    const int n = static_cast<int>(count_per_rank);
    HX_RETURN_IF_ERROR(MpiCallStatus(
        MPI_Iallgather(send, n, MPI_FLOAT, receive, n, MPI_FLOAT, comm, &request), "all-gather"));
  }
  return state_->WaitRequest(&request, "all-gather");
}

Status MpiCommunicator::ReduceScatterSum(const RankGroup& group, const float* send,
                                         int64_t count_per_rank, float* receive) {
  HX_RETURN_IF_ERROR(CheckMpiCount(count_per_rank, "reduce-scatter"));
  HX_ASSIGN_OR_RETURN(MPI_Comm comm, state_->CommOf(group));
  MPI_Request request = MPI_REQUEST_NULL;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    HX_RETURN_IF_ERROR(
        MpiCallStatus(MPI_Ireduce_scatter_block(send, receive, static_cast<int>(count_per_rank),
                                                MPI_FLOAT, MPI_SUM, comm, &request),
                      "reduce-scatter"));
  }
  return state_->WaitRequest(&request, "reduce-scatter");
}

Status MpiCommunicator::Barrier() {
  MPI_Request request = MPI_REQUEST_NULL;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    HX_RETURN_IF_ERROR(MpiCallStatus(MPI_Ibarrier(MPI_COMM_WORLD, &request), "barrier"));
  }
  return state_->WaitRequest(&request, "barrier");
}

void MpiCommunicator::Abort(const std::string& message, int exit_code) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; should it, end this rank at least
}

}  // namespace hx::exec
