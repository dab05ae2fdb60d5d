#include "hexplan/plan/op_runs.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "hexplan/core/split_text.h"

namespace hx::plan {
namespace {

// Where an op belongs (op_runs.h): its scope, its block, and the text before the block's number.
struct OpBlock {
  std::vector<std::string> scope;  // "transformer", "h.3", "attn"
  char separator = '/';
  std::string block;  // "transformer/h.3"; an unnumbered scope, or the op's name when it has none
  std::string stem;   // "transformer/h." for a numbered block
  size_t depth = 0;   // scope parts the block spans
  bool numbered = false;
};

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

bool AllDigits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), IsDigit);
}

std::string Join(const std::vector<std::string>& parts, size_t count, char separator) {
  std::string out;
  for (size_t i = 0; i < count && i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

OpBlock BlockOf(const std::string& name) {
  OpBlock b;
  b.separator = name.find('/') != std::string::npos ? '/' : '.';
  b.scope = SplitNonEmpty(name, b.separator);
  // A path's last part is the op's type ("MatMul_1"); a dotted name's last part is the op itself.
  if (!b.scope.empty() && (b.scope.size() > 1 || b.separator == '/')) b.scope.pop_back();
  if (b.scope.empty()) {
    b.block = b.stem = name;
    return b;
  }
  for (size_t i = 0; i < b.scope.size(); ++i) {
    const size_t digit = b.scope[i].find_first_of("0123456789");
    if (digit == std::string::npos) continue;
    b.numbered = true;
    b.depth = i + 1;
    b.block = Join(b.scope, i + 1, b.separator);
    b.stem = b.block.substr(0, b.block.size() - b.scope[i].size() + digit);
    return b;
  }
  b.depth = b.scope.size();
  b.block = b.stem = Join(b.scope, b.scope.size(), b.separator);
  return b;
}

// "h.0" and "h.5" -> "h.0-5"; "layer3.2" and "layer4.1" -> "layer3.2 .. layer4.1".
std::string RangeLabel(const std::string& first, const std::string& last) {
  if (first == last) return first;
  size_t common = 0;
  while (common < first.size() && common < last.size() && first[common] == last[common]) ++common;
  while (common > 0 && IsDigit(first[common - 1])) --common;  // never split a number
  const std::string a = first.substr(common), b = last.substr(common);
  if (AllDigits(a) && AllDigits(b)) return first.substr(0, common) + a + "-" + b;
  return first + " .. " + last;
}

// The scope every op of the run shares ("transformer/h.3/attn"), or the first op's block.
std::string CommonScope(const std::vector<const OpBlock*>& blocks) {
  const OpBlock& head = *blocks.front();
  size_t depth = head.scope.size();
  for (const OpBlock* b : blocks) {
    size_t same = 0;
    while (same < depth && same < b->scope.size() && b->scope[same] == head.scope[same]) ++same;
    depth = same;
  }
  const std::string common = Join(head.scope, depth, head.separator);
  return common.size() > head.block.size() ? common : head.block;
}

// Consecutive ops of one block.
struct Segment {
  std::vector<NodeId> ops;
  std::vector<const OpBlock*> blocks;  // one per op
  std::vector<std::string> inner;      // distinct scope parts right below the block, as they come
  bool whole = false;                  // holds every op of its block
};

std::vector<Segment> SplitByBlock(const std::vector<NodeId>& ops,
                                  const std::vector<OpBlock>& block_of) {
  std::vector<Segment> segments;
  for (NodeId op : ops) {
    const OpBlock* b = &block_of[op.index()];
    if (segments.empty() || segments.back().blocks.back()->block != b->block)
      segments.emplace_back();
    Segment& s = segments.back();
    s.ops.push_back(op);
    s.blocks.push_back(b);
    if (b->depth < b->scope.size() &&
        std::find(s.inner.begin(), s.inner.end(), b->scope[b->depth]) == s.inner.end())
      s.inner.push_back(b->scope[b->depth]);
  }
  return segments;
}

size_t OpsIn(const std::map<std::string, size_t>& ops_per_block, const OpBlock& b) {
  auto it = ops_per_block.find(b.block);
  return it == ops_per_block.end() ? 0 : it->second;
}

std::vector<std::string> Sorted(std::vector<std::string> parts) {
  std::sort(parts.begin(), parts.end());
  return parts;
}

// Unnumbered ops always share a run; numbered ones when their blocks share a stem and the run
// holds them whole, or holds the same parts of each ("cell0-5" of every step).
bool Joins(const Segment& last, const Segment& next) {
  const OpBlock& a = *last.blocks.front();
  const OpBlock& b = *next.blocks.front();
  if (a.numbered != b.numbered) return false;
  if (!a.numbered) return true;
  if (a.stem != b.stem || last.whole != next.whole) return false;
  return last.whole || Sorted(last.inner) == Sorted(next.inner);
}

// "cell0-5" when the parts are cell0..cell5 in any order, else nullopt.
std::optional<std::string> ContiguousRange(const std::vector<std::string>& parts) {
  const size_t digit = parts.front().find_first_of("0123456789");
  if (digit == std::string::npos) return std::nullopt;
  const std::string prefix = parts.front().substr(0, digit);
  std::vector<long> numbers;
  for (const std::string& p : parts) {
    if (p.size() > prefix.size() + 9 || p.compare(0, prefix.size(), prefix) != 0 ||
        !AllDigits(p.substr(prefix.size())))
      return std::nullopt;
    numbers.push_back(std::stol(p.substr(prefix.size())));
  }
  std::sort(numbers.begin(), numbers.end());
  if (numbers.back() - numbers.front() + 1 != static_cast<long>(numbers.size()))
    return std::nullopt;
  return prefix + std::to_string(numbers.front()) + "-" + std::to_string(numbers.back());
}

// "attn" for one part, "cell0-5" for cell0..cell5, else "{ln_1, attn, mlp, ...}".
std::string InnerLabel(const std::vector<std::string>& parts) {
  if (parts.size() == 1) return parts[0];
  if (auto range = ContiguousRange(parts)) return *range;
  std::string list = "{";
  for (size_t i = 0; i < parts.size() && i < 3; ++i) list += (i ? ", " : "") + parts[i];
  return list + (parts.size() > 3 ? ", ...}" : "}");
}

OpRun MakeRun(const std::vector<Segment>& segments,
              const std::map<std::string, size_t>& ops_per_block) {
  OpRun run;
  std::vector<const OpBlock*> blocks;
  std::set<std::string> distinct;
  for (const Segment& s : segments) {
    run.ops.insert(run.ops.end(), s.ops.begin(), s.ops.end());
    blocks.insert(blocks.end(), s.blocks.begin(), s.blocks.end());
    distinct.insert(s.blocks.front()->block);
  }
  run.first = run.ops.front();
  run.last = run.ops.back();
  run.numbered = blocks.front()->numbered;
  run.blocks = distinct.size();
  for (const Segment& s : segments)
    if (distinct.erase(s.blocks.front()->block) > 0)
      run.block_ops += OpsIn(ops_per_block, *s.blocks.front());
  if (run.blocks == 1) {
    run.label = CommonScope(blocks);
  } else {
    run.label = RangeLabel(blocks.front()->block, blocks.back()->block);
    const Segment& head = segments.front();
    if (run.numbered && !head.whole && !head.inner.empty())
      run.label += blocks.front()->separator + InnerLabel(head.inner);
  }
  return run;
}

std::map<std::string, size_t> OpsPerBlock(const graph::Graph& graph,
                                          std::vector<OpBlock>& block_of) {
  std::map<std::string, size_t> ops_per_block;
  block_of.resize(graph.num_nodes());
  for (NodeId node : graph.NodeIds()) {
    block_of[node.index()] = BlockOf(graph.node(node).name);
    if (graph.node(node).is_op()) ++ops_per_block[block_of[node.index()].block];
  }
  return ops_per_block;
}

}  // namespace

std::vector<OpRun> CollapseOpRuns(const std::vector<NodeId>& ops, const graph::Graph& graph) {
  std::vector<OpBlock> block_of;
  const std::map<std::string, size_t> ops_per_block = OpsPerBlock(graph, block_of);
  std::vector<Segment> segments = SplitByBlock(ops, block_of);
  for (Segment& s : segments) s.whole = s.ops.size() == OpsIn(ops_per_block, *s.blocks.front());
  std::vector<OpRun> runs;
  std::vector<Segment> current;
  for (Segment& s : segments) {
    if (!current.empty() && !Joins(current.back(), s)) {
      runs.push_back(MakeRun(current, ops_per_block));
      current.clear();
    }
    current.push_back(std::move(s));
  }
  if (!current.empty()) runs.push_back(MakeRun(current, ops_per_block));
  return runs;
}

}  // namespace hx::plan
