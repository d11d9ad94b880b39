// Building a step as a seatrt_op_graph (kernels.h): the builder owns every
// node's args and the tensor descriptors they point at, at addresses that
// never move, so a plan made from the graph may keep pointers into it.
#pragma once

#include <cstddef>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "seatrt/cpp/op_registry.hpp"
#include "seatrt/kernels.h"

namespace seatrt::sdk {

class GraphBuilder {
 public:
  GraphBuilder() = default;
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  // A descriptor kept by the builder (the address is stable).
  seatrt_tensor* tensor(const seatrt_tensor& t) { return &tensors_.emplace_back(t); }

  // Appends a node of kind K named `name`; returns the builder's copy of its
  // args (with struct_size set), which may still be edited before graph().
  template <seatrt_op_kind K>
  typename OpArgs<K>::type& add(const typename OpArgs<K>::type& args, std::string name) {
    using Args = typename OpArgs<K>::type;
    auto storage = std::make_unique<std::byte[]>(sizeof(Args));
    auto* copy = new (storage.get()) Args(args);
    copy->struct_size = sizeof(Args);
    args_.push_back(std::move(storage));
    ops_.push_back(seatrt_op{sizeof(seatrt_op), K, copy});
    names_.push_back(std::move(name));
    return *copy;
  }

  // A point of interest after the nodes added so far (a trace point:
  // "layer 3 hidden").  Marks are not nodes; eager runs report them.
  struct Mark {
    std::size_t after_nodes;
    int32_t layer;
    std::string name;
    const seatrt_tensor* tensor;
  };
  void mark(int32_t layer, std::string name, const seatrt_tensor* t) {
    marks_.push_back(Mark{ops_.size(), layer, std::move(name), t});
  }

  std::size_t size() const { return ops_.size(); }
  const std::vector<seatrt_op>& nodes() const { return ops_; }
  const std::vector<Mark>& marks() const { return marks_; }
  const std::string& node_name(std::size_t i) const { return names_[i]; }

  // The graph over the builder's nodes; valid while the builder lives and
  // gets no more nodes.
  seatrt_op_graph graph(std::string name, int32_t launches) {
    name_ = std::move(name);
    name_ptrs_.clear();
    for (const auto& n : names_) name_ptrs_.push_back(n.c_str());
    seatrt_op_graph g{};
    g.struct_size = sizeof(g);
    g.num_nodes = static_cast<int32_t>(ops_.size());
    g.nodes = ops_.data();
    g.node_names = name_ptrs_.data();
    g.name = name_.c_str();
    g.launches = launches;
    return g;
  }

 private:
  std::deque<seatrt_tensor> tensors_;
  std::vector<std::unique_ptr<std::byte[]>> args_;
  std::vector<seatrt_op> ops_;
  std::vector<std::string> names_;
  std::vector<const char*> name_ptrs_;
  std::vector<Mark> marks_;
  std::string name_;
};

}  // namespace seatrt::sdk
