// The steering panel's parameter widgets, built from a collector's parameter list
// (ParameterForm), and its Run box's text (describe_run), offscreen
// (QT_QPA_PLATFORM=offscreen) and without ParaView.
#include <QApplication>
#include <QDoubleSpinBox>
#include <QLabel>
#include <array>
#include <catch2/catch.hpp>
#include <variant>

#include "parameter_form.hpp"
#include "run_text.hpp"

namespace col = rwd::collector;
using rwd::paraview::ParameterForm;
using rwd::paraview::describe_run;

namespace {
QApplication& app() {
  static int argc = 1;
  static char name[] = "test_parameter_form";
  static char* argv[] = {name, nullptr};
  static QApplication a(argc, argv);
  return a;
}

std::vector<col::ParameterInfo> run_parameters() {
  return {{"physics.nu", 0.001, "m^2/s", 1e-9, 10.0, "kinematic viscosity"},
          {"boundary.xmin.velocity", std::array<double, 3>{1.5, 0.0, 0.0}, "m/s", -10.0, 10.0, "inflow velocity"}};
}
}  // namespace

TEST_CASE("the form has one row per parameter of the list, shaped, bounded and explained as listed", "[plugin]") {
  app();
  ParameterForm form;
  form.set_parameters(run_parameters());
  REQUIRE(form.size() == 2);
  const auto nu = form.editors("physics.nu");
  REQUIRE(nu.size() == 1);
  CHECK(nu[0]->value() == Approx(0.001));
  CHECK(nu[0]->minimum() == Approx(1e-9).margin(1e-10));
  CHECK(nu[0]->maximum() == 10.0);
  CHECK(nu[0]->toolTip() == "kinematic viscosity");
  const auto u = form.editors("boundary.xmin.velocity");
  REQUIRE(u.size() == 3);
  CHECK(u[0]->value() == 1.5);
  CHECK(u[1]->value() == 0.0);
  CHECK(u[2]->minimum() == -10.0);
  CHECK(form.editors("time.end").empty());
  // The unit is in the label.
  bool unit_shown = false;
  for (auto* l : form.findChildren<QLabel*>()) unit_shown |= l->text() == "physics.nu [m^2/s]";
  CHECK(unit_shown);
}

TEST_CASE("only edited parameters are sent, with the value shown", "[plugin]") {
  app();
  ParameterForm form;
  form.set_parameters(run_parameters());
  CHECK(form.changed().empty());
  CHECK(form.values().size() == 2);
  form.editors("boundary.xmin.velocity")[0]->setValue(2.0);
  const auto changed = form.changed();
  REQUIRE(changed.size() == 1);
  const auto& v = std::get<std::array<double, 3>>(changed.at("boundary.xmin.velocity"));
  CHECK(v == std::array<double, 3>{2.0, 0.0, 0.0});
  // Values outside the listed range are clamped by the widget, never sent.
  form.editors("physics.nu")[0]->setValue(-1.0);
  CHECK(std::get<double>(form.changed().at("physics.nu")) == Approx(1e-9).margin(1e-10));
}

TEST_CASE("a new list replaces the rows and forgets the edits", "[plugin]") {
  app();
  ParameterForm form;
  form.set_parameters(run_parameters());
  form.editors("physics.nu")[0]->setValue(0.002);
  form.set_parameters({{"time.end", 30.0, "s", 0.0, 1e6, "end time"}});
  CHECK(form.size() == 1);
  CHECK(form.editors("physics.nu").empty());
  CHECK(form.changed().empty());
  CHECK(form.findChildren<QDoubleSpinBox*>().size() == 1);
}

TEST_CASE("in a panel as narrow as a docked one, every name and every box of a vector is fully shown", "[plugin]") {
  app();
  ParameterForm form;
  form.set_parameters(run_parameters());
  // ParaView's right-hand dock area as it opens: about 300 px, 42 characters of its font.
  const int width = 42 * form.fontMetrics().averageCharWidth();
  form.resize(width, form.sizeHint().height());
  form.show();
  QApplication::processEvents();
  form.resize(width, form.heightForWidth(width) > 0 ? form.heightForWidth(width) : form.sizeHint().height());
  QApplication::processEvents();
  INFO("panel " << width << " px, a box at least " << form.editors("physics.nu")[0]->minimumWidth());
  CHECK(form.minimumSizeHint().width() <= width);
  for (auto* label : form.findChildren<QLabel*>()) {
    INFO(label->text().toStdString() << ": " << label->width() << " px of " << label->sizeHint().width());
    CHECK(label->width() >= label->sizeHint().width());
    CHECK(label->mapTo(&form, QPoint(label->width(), 0)).x() <= width);
  }
  for (const std::string name : {"physics.nu", "boundary.xmin.velocity"})
    for (auto* box : form.editors(name)) {
      INFO(name << " box " << box->objectName().toStdString() << " ends at "
                << box->mapTo(&form, QPoint(box->width(), 0)).x());
      CHECK(box->mapTo(&form, QPoint(box->width(), 0)).x() <= width);
      CHECK(box->width() >= box->fontMetrics().horizontalAdvance("-10.000"));  // a value stays readable
    }
}

TEST_CASE("a box shows its value whole, as short as it is, and is wide enough for it", "[plugin]") {
  app();
  ParameterForm form;
  form.set_parameters(run_parameters());
  const int width = 42 * form.fontMetrics().averageCharWidth();  // a docked panel, as above
  form.resize(width, form.sizeHint().height());
  form.show();
  auto* nu = form.editors("physics.nu")[0];
  nu->setValue(0.0000123);
  QApplication::processEvents();
  CHECK(nu->text() == "0.0000123");
  CHECK(form.editors("boundary.xmin.velocity")[0]->text() == "1.5");
  CHECK(form.editors("boundary.xmin.velocity")[1]->text() == "0");
  // The text fits inside the box (its frame and arrows take some 30 px).
  CHECK(nu->width() >= nu->fontMetrics().horizontalAdvance(nu->text()) + 20);
  CHECK(nu->value() == Approx(0.0000123));
}

TEST_CASE("the Run box says the run's state, step, time, speed and ranks in words, and each future's ranks and changes",
          "[plugin]") {
  col::RunStatus s;
  s.state = col::RunState::paused;
  s.step = 12;
  s.time = 0.25;
  s.steps_per_second = 3;
  s.ranks = 1;
  s.file = "run.h5";
  CHECK(describe_run(s).toStdString() == "paused at step 12 (t = 0.25), 3 steps/s, 1 rank\nrun.h5");
  s.ranks = 2;
  s.parent = "p.h5";
  s.futures = {{"a.h5", "p.h5", col::RunState::running, 14, 0.3, 1.0, {}}, {"b.h5", "p.h5", col::RunState::paused, 13, 0.28, 1.0, {}}};
  CHECK(describe_run(s).toStdString() ==
        "paused at step 12 (t = 0.25), 3 steps/s, 2 ranks\nrun.h5\nbranched from p.h5\n2 futures:\n"
        "  a.h5  running at step 14\n  b.h5  paused at step 13");
  // A 1.12 server says where each future computes; each lists its changes.
  s.ranks = 3;
  s.futures = {{"a.h5", "p.h5", col::RunState::running, 14, 0.3, 1.0, {"kappa=0.02", "q=4"}, 0, 2},
               {"b.h5", "p.h5", col::RunState::running, 14, 0.3, 1.0, {}, 2, 1}};
  CHECK(describe_run(s).toStdString() ==
        "paused at step 12 (t = 0.25), 3 steps/s, 3 ranks\nrun.h5\nbranched from p.h5\n2 futures:\n"
        "  a.h5  running at step 14, on compute ranks 0-1, kappa=0.02; q=4\n  b.h5  running at step 14, on compute "
        "rank 2");
}
