#pragma once
// Strong integer ids: a NodeId cannot be passed where a DeviceId is expected.

#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>

namespace hx {

template <typename Tag>
class Id {
 public:
  using ValueType = uint32_t;
  static constexpr ValueType kInvalidValue = std::numeric_limits<ValueType>::max();

  constexpr Id() = default;
  constexpr explicit Id(ValueType value) : value_(value) {}
  constexpr explicit Id(size_t value) : value_(static_cast<ValueType>(value)) {}
  constexpr explicit Id(int value) : value_(static_cast<ValueType>(value)) {}

  static constexpr Id Invalid() { return Id(); }
  constexpr bool valid() const { return value_ != kInvalidValue; }
  constexpr ValueType value() const { return value_; }
  // Index into the owning container.
  constexpr size_t index() const { return value_; }

  friend constexpr bool operator==(Id a, Id b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(Id a, Id b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(Id a, Id b) { return a.value_ < b.value_; }
  friend std::ostream& operator<<(std::ostream& os, Id id) {
    return id.valid() ? os << id.value_ : os << "invalid";
  }

 private:
  ValueType value_ = kInvalidValue;
};

struct NodeIdTag {};
struct TensorIdTag {};
struct DeviceIdTag {};
struct LinkIdTag {};
struct PlaceIdTag {};

using NodeId = Id<NodeIdTag>;      // an operator, weight, input or output of a graph
using TensorId = Id<TensorIdTag>;  // a value flowing along the edges of a graph
using DeviceId = Id<DeviceIdTag>;  // a compute device of a cluster (GPU, CPU core group, MIG slice)
using LinkId = Id<LinkIdTag>;      // a link of a cluster (PCIe, NVLink, network)
using PlaceId = Id<PlaceIdTag>;    // any endpoint of a cluster: a device or a host memory

}  // namespace hx

template <typename Tag>
struct std::hash<hx::Id<Tag>> {
  size_t operator()(hx::Id<Tag> id) const noexcept { return std::hash<uint32_t>()(id.value()); }
};
