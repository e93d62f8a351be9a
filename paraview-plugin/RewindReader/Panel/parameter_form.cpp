#include "parameter_form.hpp"

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <algorithm>
#include <array>
#include <cmath>
#include <variant>

namespace rwd::paraview {

namespace {
/// A spin box that shows its value whole and no longer than it is ("0.001", not
/// "0.0010000000" cut off at the box's edge), and is at least as wide as that text.
class ValueBox : public QDoubleSpinBox {
 public:
  explicit ValueBox(QWidget* parent) : QDoubleSpinBox(parent) {}
  [[nodiscard]] QString textFromValue(double value) const override {
    QString text = locale().toString(value, 'f', decimals()).remove(locale().groupSeparator());
    const QChar point = locale().decimalPoint();
    if (text.contains(point)) {
      while (text.endsWith('0')) text.chop(1);
      if (text.endsWith(point)) text.chop(1);
    }
    return text;
  }
  /// Wide enough for "-10.000" and for the value shown.
  void fit_width() {
    const int text = std::max(fontMetrics().horizontalAdvance("-10.000"), fontMetrics().horizontalAdvance(textFromValue(value())));
    setMinimumWidth(text + 30);  // the frame and the arrows
  }
};

QDoubleSpinBox* spin_box(const collector::ParameterInfo& p, double value, QWidget* parent) {
  auto* box = new ValueBox(parent);
  // Enough digits for viscosities (1e-6 m^2/s) and velocities alike; a hundredth of the
  // range per step (a tenth of the value when the range is empty).
  box->setDecimals(10);
  box->setRange(p.min, p.max);
  const double span = p.max - p.min;
  box->setSingleStep(span > 0 && std::isfinite(span) ? span / 100 : std::max(std::abs(value) / 10, 1e-3));
  box->setValue(value);
  box->setToolTip(QString::fromStdString(p.description));
  box->setAccelerated(true);
  // Narrow enough for three in a docked panel (its size hint fits all ten decimals of the
  // range's widest value), never narrower than the value shown; it grows with the panel.
  box->fit_width();
  QObject::connect(box, QOverload<double>::of(&QDoubleSpinBox::valueChanged), box, [box](double) { box->fit_width(); });
  box->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
  return box;
}
}  // namespace

ParameterForm::ParameterForm(QWidget* parent) : QWidget(parent), layout_(new QFormLayout(this)) {
  // A row whose boxes do not fit beside the name goes below it: the names stay whole.
  layout_->setRowWrapPolicy(QFormLayout::WrapLongRows);
}

void ParameterForm::set_parameters(const std::vector<collector::ParameterInfo>& parameters) {
  while (layout_->rowCount() > 0) layout_->removeRow(0);  // deletes the row's widgets
  rows_.clear();
  rows_.reserve(parameters.size());
  for (const auto& p : parameters) {
    Row row{p, {}, false};
    // Object names (the parameter, then 0..2 per box) let GUI tests find the boxes.
    auto* field = new QWidget(this);
    field->setObjectName(QString::fromStdString(p.name));
    auto* h = new QHBoxLayout(field);
    h->setContentsMargins(0, 0, 0, 0);
    if (const auto* v = std::get_if<std::array<double, 3>>(&p.value)) {
      for (double c : *v) row.boxes.push_back(spin_box(p, c, field));
    } else {
      row.boxes.push_back(spin_box(p, std::get<double>(p.value), field));
    }
    for (std::size_t i = 0; i < row.boxes.size(); ++i) {
      row.boxes[i]->setObjectName(QString::number(i));
      h->addWidget(row.boxes[i]);
    }
    const std::string label = p.unit.empty() ? p.name : p.name + " [" + p.unit + "]";
    auto* name = new QLabel(QString::fromStdString(label), this);
    name->setToolTip(QString::fromStdString(p.description));
    layout_->addRow(name, field);
    rows_.push_back(std::move(row));
  }
  // Connected after the values are set, so only the user's edits count.
  for (std::size_t i = 0; i < rows_.size(); ++i)
    for (auto* b : rows_[i].boxes)
      QObject::connect(b, QOverload<double>::of(&QDoubleSpinBox::valueChanged), this, [this, i](double) { rows_[i].edited = true; });
}

collector::ParamValue ParameterForm::value_of(const Row& row) {
  if (row.boxes.size() == 3) return std::array<double, 3>{row.boxes[0]->value(), row.boxes[1]->value(), row.boxes[2]->value()};
  return row.boxes.front()->value();
}

collector::ParamValues ParameterForm::changed() const {
  collector::ParamValues out;
  for (const auto& r : rows_)
    if (r.edited) out[r.info.name] = value_of(r);
  return out;
}

collector::ParamValues ParameterForm::values() const {
  collector::ParamValues out;
  for (const auto& r : rows_) out[r.info.name] = value_of(r);
  return out;
}

std::vector<QDoubleSpinBox*> ParameterForm::editors(const std::string& name) const {
  const auto it = std::find_if(rows_.begin(), rows_.end(), [&](const Row& r) { return r.info.name == name; });
  return it == rows_.end() ? std::vector<QDoubleSpinBox*>{} : it->boxes;
}

}  // namespace rwd::paraview
