// The Rewind steering dock panel (View → Rewind Steering): steer the collector of a
// running `rewind run --listen` from the GUI, as rewind_steering does from pvpython.
//
// Connection: host, port and token (or "From live source": those of the selected Rewind
// Live Source, or of the only one). Then: the run's status (state, step, time, speed,
// file); Pause / Resume / Stop; "Follow the run every N s" refreshes the live source, the
// compared futures and the status at an interval; the steerable parameters as widgets
// built from the collector's parameters_reply (ParameterForm: nothing is declared here),
// "Apply" sends the edited ones (set); "Branch" starts a branch from a committed step (a
// time selector) with the edited values into an optional output file. Futures: "Add
// future" takes the edited values as one future of the next fork, "Fork" forks the run at
// "Branch from" into them (one branch request with futures); "Act on future" names the
// file of one future for Pause, Resume, Stop and Apply (empty: every future); "Compare"
// lays out one view per running future (rewind_compare.py, through ParaView's Python).
// After every command the panel shows the run as it is then (its state, and the
// parameters in force: the edits are replaced) together with the command's message, and
// the live source is refreshed and the views re-rendered. The dock opens hidden: View →
// Rewind Steering shows it. Errors are one line in the panel and in the output window.
// Calls use the collector's C++ client with its deadlines (a steering command waits at
// most until the run's next step boundary, 30 s at the most).
#pragma once
#include <QDockWidget>
#include <memory>

class pqRewindSteeringPanel : public QDockWidget {
 public:
  pqRewindSteeringPanel(const QString& title, QWidget* parent = nullptr, Qt::WindowFlags flags = Qt::WindowFlags());
  explicit pqRewindSteeringPanel(QWidget* parent = nullptr, Qt::WindowFlags flags = Qt::WindowFlags());
  ~pqRewindSteeringPanel() override;

 private:
  void build();
  struct Internals;
  std::unique_ptr<Internals> d_;
};
