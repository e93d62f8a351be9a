// The steerable parameters of a run as Qt widgets, built from the collector's
// parameters_reply (docs/collector-protocol.md, Parameters): the plugin declares no
// parameter itself. One row per parameter: the name (and unit) as label, one spin box for
// a number, three for a vector, each limited to [min, max], showing the current value,
// with the description as tooltip. The steering panel puts it in its dock; the offscreen
// test tests/plugin/test_parameter_form.cpp checks it without ParaView.
//
// GUI thread only (a QWidget). Never throws.
#pragma once
#include <QWidget>
#include <cstddef>
#include <string>
#include <vector>

#include "rewind/collector/messages.hpp"

class QDoubleSpinBox;
class QFormLayout;

namespace rwd::paraview {

class ParameterForm : public QWidget {
 public:
  explicit ParameterForm(QWidget* parent = nullptr);

  /// Replaces every row by the rows of `parameters` (in their order); nothing is changed
  /// afterwards until the user edits a box.
  void set_parameters(const std::vector<collector::ParameterInfo>& parameters);
  /// The parameters the user edited since set_parameters, with the values shown.
  [[nodiscard]] collector::ParamValues changed() const;
  /// Every parameter with the value shown.
  [[nodiscard]] collector::ParamValues values() const;
  /// The spin boxes of parameter `name` (1 for a number, 3 for a vector; none if unknown).
  [[nodiscard]] std::vector<QDoubleSpinBox*> editors(const std::string& name) const;
  [[nodiscard]] std::size_t size() const { return rows_.size(); }

 private:
  struct Row {
    collector::ParameterInfo info;
    std::vector<QDoubleSpinBox*> boxes;
    bool edited = false;
  };
  [[nodiscard]] static collector::ParamValue value_of(const Row& row);
  std::vector<Row> rows_;
  QFormLayout* layout_;
};

}  // namespace rwd::paraview
