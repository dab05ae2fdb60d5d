#include "hexplan/exec/thread_communicator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <vector>

namespace hx::exec {
namespace {

// Rank r contributes values r * 10 + e (e = element index) in every collective below.
std::vector<float> CommTestValues(int rank, int64_t count) {
  std::vector<float> v(static_cast<size_t>(count));
  for (int64_t e = 0; e < count; ++e) v[static_cast<size_t>(e)] = float(rank * 10 + e);
  return v;
}

TEST(ThreadCommunicatorTest, AllReduceOnOverlappingAndDisjointGroups) {
  ThreadWorld world(4);
  std::vector<std::vector<float>> pair(4), all(4), odd(4);
  Status s = world.Run([&](Communicator& comm) -> Status {
    const int r = comm.rank();
    // Disjoint pairs {0,1} and {2,3}, then the whole world, then {1,2,3} (overlaps both pairs).
    pair[r] = CommTestValues(r, 3);
    HX_RETURN_IF_ERROR(
        comm.AllReduceSum(r < 2 ? RankGroup{0, 1} : RankGroup{2, 3}, pair[r].data(), 3));
    all[r] = CommTestValues(r, 2);
    HX_RETURN_IF_ERROR(comm.AllReduceSum({0, 1, 2, 3}, all[r].data(), 2));
    if (r > 0) {
      odd[r] = CommTestValues(r, 1);
      HX_RETURN_IF_ERROR(comm.AllReduceSum({1, 2, 3}, odd[r].data(), 1));
    }
    return comm.Barrier();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (int r = 0; r < 4; ++r) {
    const float base = r < 2 ? 10.0f : 50.0f;  // 0+10 or 20+30
    EXPECT_EQ(pair[r], (std::vector<float>{base, base + 2, base + 4})) << r;
    EXPECT_EQ(all[r], (std::vector<float>{60.0f, 64.0f})) << r;
    if (r > 0) {
      EXPECT_EQ(odd[r], std::vector<float>{60.0f}) << r;
    }
  }
}

TEST(ThreadCommunicatorTest, AllGatherAndReduceScatterFollowGroupOrder) {
  ThreadWorld world(3);
  std::vector<std::vector<float>> gathered(3, std::vector<float>(4, -1.0f));
  std::vector<std::vector<float>> scattered(3, std::vector<float>(2, -1.0f));
  Status s = world.Run([&](Communicator& comm) -> Status {
    const int r = comm.rank();
    if (r != 1) {  // group {0,2}: rank 2's values land in the second block
      std::vector<float> mine = CommTestValues(r, 2);
      HX_RETURN_IF_ERROR(comm.AllGather({0, 2}, mine.data(), 2, gathered[r].data()));
    }
    std::vector<float> send = CommTestValues(r, 6);  // 3 blocks of 2
    return comm.ReduceScatterSum({0, 1, 2}, send.data(), 2, scattered[r].data());
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(gathered[0], (std::vector<float>{0, 1, 20, 21}));
  EXPECT_EQ(gathered[2], gathered[0]);
  EXPECT_EQ(gathered[1], (std::vector<float>(4, -1.0f)));  // not a member
  // Block i of the sum over ranks 0..2 of (r*10 + e): 30 + 3e for e = 2i, 2i+1.
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(scattered[r], (std::vector<float>{30.0f + 6 * r, 33.0f + 6 * r})) << r;
}

TEST(ThreadCommunicatorTest, PointToPointMatchesTagsAndSizes) {
  ThreadWorld world(2);
  std::vector<float> got_a(2), got_b(1);
  Status s = world.Run([&](Communicator& comm) -> Status {
    if (comm.rank() == 0) {
      std::vector<float> a{1.0f, 2.0f}, b{7.0f};
      HX_ASSIGN_OR_RETURN(auto sb, comm.PostSend(1, 5, b.data(), 4));  // tag 5 first
      HX_ASSIGN_OR_RETURN(auto sa, comm.PostSend(1, 4, a.data(), 8));
      HX_RETURN_IF_ERROR(sa->Wait());
      return sb->Wait();
    }
    HX_ASSIGN_OR_RETURN(auto ra, comm.PostReceive(0, 4, got_a.data(), 8));
    HX_ASSIGN_OR_RETURN(auto rb, comm.PostReceive(0, 5, got_b.data(), 4));
    HX_RETURN_IF_ERROR(ra->Wait());
    HX_RETURN_IF_ERROR(rb->Wait());
    return rb->Done() ? Status::Ok() : Internal("receive not done after Wait");
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(got_a, (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(got_b, std::vector<float>{7.0f});
}

TEST(ThreadCommunicatorTest, MismatchedSizesAreErrorsNotHangs) {
  ThreadWorld world(2, std::chrono::seconds(20));
  Status s = world.Run([&](Communicator& comm) -> Status {
    std::vector<float> v(4, 1.0f);
    return comm.AllReduceSum({0, 1}, v.data(), comm.rank() == 0 ? 4 : 3);
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("mismatch"), std::string::npos) << s.message();

  ThreadWorld p2p(2, std::chrono::seconds(20));
  s = p2p.Run([&](Communicator& comm) -> Status {
    std::vector<float> v(4, 1.0f);
    if (comm.rank() == 0) return comm.PostSend(1, 9, v.data(), 16).status();
    HX_ASSIGN_OR_RETURN(auto r, comm.PostReceive(0, 9, v.data(), 12));
    return r->Wait();
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("tag 9"), std::string::npos) << s.message();
}

TEST(ThreadCommunicatorTest, BadGroupsAreRefused) {
  ThreadWorld world(2);
  Status s = world.Run([&](Communicator& comm) -> Status {
    float v = 0.0f;
    return comm.AllReduceSum(comm.rank() == 0 ? RankGroup{1, 0} : RankGroup{1}, &v, 1);
  });
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
}

TEST(ThreadCommunicatorTest, AbortAndFailedRanksReleaseTheOthers) {
  // Rank 1 aborts while ranks 0 and 2 wait in a collective it never joins.
  ThreadWorld world(3, std::chrono::seconds(20));
  std::atomic<int> released{0};
  Status s = world.Run([&](Communicator& comm) -> Status {
    if (comm.rank() == 1) comm.Abort("rank 1, op fc2: missing kernel", 2);
    float v = 1.0f;
    Status st = comm.AllReduceSum({0, 1, 2}, &v, 1);
    if (!st.ok()) ++released;
    return st;
  });
  EXPECT_EQ(released.load(), 2);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_EQ(world.abort_exit_code(), 2);
  EXPECT_EQ(world.abort_message(), "rank 1, op fc2: missing kernel");

  // A rank that returns an error ends a peer's receive; a short watchdog ends a lone wait.
  ThreadWorld failed(2, std::chrono::seconds(20));
  s = failed.Run([&](Communicator& comm) -> Status {
    if (comm.rank() == 0) return NotFound("rank 0: weights file");
    float v = 0.0f;
    HX_ASSIGN_OR_RETURN(auto r, comm.PostReceive(0, 1, &v, 4));
    return r->Wait();
  });
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();

  ThreadWorld lonely(2, std::chrono::milliseconds(200));
  s = lonely.Run([&](Communicator& comm) -> Status {
    if (comm.rank() == 0) return Status::Ok();
    float v = 0.0f;
    HX_ASSIGN_OR_RETURN(auto r, comm.PostReceive(0, 1, &v, 4));
    return r->Wait();
  });
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
  EXPECT_NE(s.message().find("watchdog"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace hx::exec
