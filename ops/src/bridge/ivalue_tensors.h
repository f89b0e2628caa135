// The tensors a boxed argument or result holds, replaced one by one: what the bridge does to move
// arguments to the host, results to the device, and narrow dtypes to wide ones and back.
#pragma once

#include <ATen/core/ivalue.h>

#include <utility>
#include <vector>

namespace torchada::ops::bridge {

// Each tensor `v` holds (a Tensor, a Tensor[], the tensors of a generic list such as Tensor?[],
// those of a tuple) becomes f(tensor). Lists and tuples are rebuilt: never the caller's.
template <class F>
void map_tensors(c10::IValue& v, F&& f) {
  if (v.isTensor()) {
    v = f(v.toTensor());
  } else if (v.isTensorList()) {
    c10::List<at::Tensor> out;
    out.reserve(v.toTensorList().size());
    for (const at::Tensor& t : v.toTensorList()) out.push_back(f(t));
    v = std::move(out);
  } else if (v.isList()) {
    c10::impl::GenericList l = v.toList().copy();
    for (size_t i = 0; i < l.size(); ++i) {
      c10::IValue e = l.get(i);
      if (e.isTensor()) l.set(i, f(e.toTensor()));
    }
    v = std::move(l);
  } else if (v.isTuple()) {
    std::vector<c10::IValue> elems = v.toTupleRef().elements().vec();
    for (auto& e : elems) map_tensors(e, f);
    v = c10::ivalue::Tuple::create(std::move(elems));
  }
}

}  // namespace torchada::ops::bridge
