#include "pqRewindSteeringPanel.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QEventLoop>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QStringList>
#include <QTimer>
#include <QVBoxLayout>
#include <QtDebug>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "client_errors.hpp"
#include "panel_paraview.h"
#include "parameter_form.hpp"
#include "rewind/collector/client.hpp"
#include "rewind/collector/contact.hpp"
#include "rewind/collector/token.hpp"
#include "run_text.hpp"
#include "vtkSMPropertyHelper.h"
#include "vtkSMSourceProxy.h"

namespace col = rwd::collector;
namespace pv = rwd::paraview;

struct pqRewindSteeringPanel::Internals {
  QLineEdit* host = nullptr;
  QSpinBox* port = nullptr;
  QLineEdit* token = nullptr;
  QLineEdit* token_file = nullptr;
  QLabel* state = nullptr;   ///< the run's state alone: running, paused, ...
  QLabel* status = nullptr;
  QLabel* message = nullptr;
  QLineEdit* from = nullptr;
  QLineEdit* output = nullptr;
  QLineEdit* future = nullptr;  ///< the file of the future Pause, Resume, Stop and Apply act on ("" = every one)
  QLabel* fork_rows = nullptr;
  std::vector<col::ParamValues> next_fork;  ///< the futures of the next fork: each one's changes
  pv::ParameterForm* form = nullptr;
  QCheckBox* following = nullptr;
  QTimer* follow = nullptr;  ///< refreshes the live source (and the status) at an interval
  bool comparing = false;    ///< Compare laid out the futures: Follow updates them too
  std::optional<col::Client> client;
  bool busy = false;  ///< a request is on its way (off_gui): further actions wait their turn
  /// What the last requests answered, shown with the command's message (show_answers):
  /// the Run box, the parameters and the message line change together.
  std::optional<col::RunStatus> new_status;
  std::optional<std::vector<col::ParameterInfo>> new_parameters;

  /// Seconds a request may take: 30, or REWIND_PANEL_TIMEOUT (tests).
  static double timeout() {
    const char* env = std::getenv("REWIND_PANEL_TIMEOUT");
    return env && std::atof(env) > 0 ? std::atof(env) : 30.0;
  }
  /// How long an answer is simply waited for: 1 s, or REWIND_PANEL_QUICK seconds (GUI
  /// tests that check each answer before their next event set it high).
  static std::chrono::milliseconds quick() {
    const char* env = std::getenv("REWIND_PANEL_QUICK");
    const double s = env && std::atof(env) > 0 ? std::atof(env) : 1.0;
    return std::chrono::milliseconds(static_cast<long long>(s * 1000));
  }

  /// Runs `f` (a network call) on a helper thread. An answer within quick() (nearly
  /// every one) is simply waited for; after that the GUI's event loop runs while
  /// waiting, so ParaView repaints and stays usable however long the collector takes
  /// (at most timeout()). Returns f's result or rethrows its exception. The client is
  /// used by one thread at a time: actions are refused while busy.
  template <class F>
  auto off_gui(F f) -> decltype(f()) {
    struct Busy {
      bool& b;
      explicit Busy(bool& x) : b(x) { b = true; }
      ~Busy() { b = false; }
    } guard(busy);
    auto result = std::async(std::launch::async, std::move(f));
    QEventLoop loop;
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
      if (result.wait_for(std::chrono::seconds(0)) == std::future_status::ready) loop.quit();
    });
    poll.start(5);
    if (result.wait_for(quick()) != std::future_status::ready) loop.exec();
    return result.get();
  }

  std::string where() const { return host->text().toStdString() + ":" + std::to_string(port->value()); }

  void show(const QString& text, bool error) {
    message->setText(text);
    message->setStyleSheet(error ? "color: #c00" : "");
    if (error) qWarning().noquote() << "Rewind steering:" << text;
  }

  /// The Run box and the parameters as the last requests answered (unchanged if none).
  void show_answers() {
    if (new_status) {
      state->setText(QString::fromStdString(col::to_string(new_status->state)));
      status->setText(pv::describe_run(*new_status));
    }
    if (new_parameters) form->set_parameters(*new_parameters);
    new_status.reset();
    new_parameters.reset();
  }

  /// Runs `f` on a connected client; its message, the Run box and the parameters it
  /// fetched are shown together. A failure is one line in the panel and the output
  /// window, and drops the connection (the next action connects anew).
  void act(const std::function<QString(col::Client&)>& f) {
    if (busy) return show("still waiting for the collector's answer to the previous request", true);
    try {
      if (!client || !client->connected()) connect_client();
      const QString text = f(*client);
      show_answers();
      show(text, false);
    } catch (const std::exception& e) {
      new_status.reset();
      new_parameters.reset();
      if (client && !client->connected()) client.reset();
      show(QString::fromStdString(pv::describe_client_error(e, where(), timeout())), true);
    }
  }

  void connect_client() {
    client.reset();
    col::ClientOptions opt;
    opt.timeout = std::chrono::milliseconds(static_cast<long long>(timeout() * 1000));
    opt.name = "rewind-paraview-panel";
    const auto h = host->text().toStdString();
    const auto t = col::resolve_token(token->text().toStdString(), token_file->text().toStdString());
    const auto p = static_cast<std::uint16_t>(port->value());
    off_gui([&] {
      client.emplace(h, p, t, opt);
      return 0;
    });
  }

  /// The futures of the next fork, one line each.
  void show_fork() {
    QStringList lines;
    for (const auto& values : next_fork) {
      QStringList changes;
      for (const auto& [key, v] : values) {
        const auto* x = std::get_if<double>(&v);
        const auto* a = std::get_if<std::array<double, 3>>(&v);
        changes << QString::fromStdString(key) + "=" +
                       (x ? QString::number(*x) : QString("[%1, %2, %3]").arg((*a)[0]).arg((*a)[1]).arg((*a)[2]));
      }
      lines << QString("%1: %2").arg(lines.size() + 1).arg(changes.isEmpty() ? "unchanged" : changes.join("; "));
    }
    fork_rows->setText(lines.isEmpty() ? "(none: add one per future)" : lines.join("\n"));
  }

  void fetch_status(col::Client& c) { new_status = off_gui([&] { return c.status(); }); }

  /// After a command: the run as it is now (state and parameters; a branch or a set
  /// changes the values in force, so the edited boxes are replaced by the run's).
  void fetch_run(col::Client& c) {
    fetch_status(c);
    new_parameters = off_gui([&] { return c.parameters(); });
  }

  /// After pause / resume: as fetch_run, but the state is the command's reply while the
  /// collector's status has not caught up with it (the job reports its status at step
  /// boundaries: right after a resume it may still say paused).
  void fetch_run(col::Client& c, const col::ControlReply& r) {
    fetch_run(c);
    if (new_status->step <= r.step) new_status->state = r.state;
  }

  /// The live source shows the run's new state.
  static void refresh_live_source() {
    QString why;
    if (vtkSMSourceProxy* proxy = pv::pick_live_source(why)) pv::refresh(proxy);
  }

  /// Host, port and token of the active (or only) Rewind Live Source: of the job its
  /// ContactFile names, with that file's token unless the source gives one.
  void take_source_settings() {
    QString why;
    vtkSMSourceProxy* proxy = pv::pick_live_source(why);
    if (!proxy) return show(why, true);
    host->setText(vtkSMPropertyHelper(proxy, "Host").GetAsString());
    port->setValue(vtkSMPropertyHelper(proxy, "PortNumber").GetAsInt());
    token->setText(vtkSMPropertyHelper(proxy, "Token").GetAsString());
    token_file->setText(vtkSMPropertyHelper(proxy, "TokenFile").GetAsString());
    client.reset();
    const char* named = vtkSMPropertyHelper(proxy, "ContactFile").GetAsString();
    if (const std::string contact = named != nullptr ? named : ""; !contact.empty()) {
      try {
        const col::Contact c = col::read_contact(contact);
        host->setText(QString::fromStdString(c.host));
        port->setValue(c.port);
        if (token->text().isEmpty() && token_file->text().isEmpty()) token->setText(QString::fromStdString(c.token));
      } catch (const std::exception& e) {
        return show(QString::fromStdString(e.what()), true);
      }
    }
    show("settings of the live source " + pv::source_name(proxy), false);
  }

  /// Compare: one view per running future (rewind_compare.py), followed while Follow is on.
  void compare() {
    if (busy) return show("still waiting for the collector's answer to the previous request", true);
    const QString answer = pv::call_compare(
        "panel_compare", {host->text(), QString::number(port->value()), token->text(), token_file->text()});
    comparing = comparing || !answer.startsWith("error: ");
    show(answer.startsWith("error: ") ? answer.mid(7) : answer, answer.startsWith("error: "));
  }

  /// A Follow tick: the live source (and the compared futures) fetch again, the Run box
  /// shows the run's status and the message line no older command's answer.
  void follow_tick() {
    if (busy) return;  // the previous tick (or an action) is still waiting
    refresh_live_source();
    if (const QString e = comparing ? pv::call_compare("panel_follow", {}) : QString(); !e.isEmpty()) {
      comparing = false;  // its sources were deleted, or the run ended
      show(e.mid(7), true);
    }
    if (!client || !client->connected()) return;
    try {
      fetch_status(*client);
      show_answers();
      if (message->styleSheet().isEmpty()) show("", false);
    } catch (const std::exception& e) {  // the run ended or the collector went away: stop following
      following->setChecked(false);
      client.reset();
      show(QString::fromStdString(pv::describe_client_error(e, where(), timeout())), true);
    }
  }

  QGroupBox* collector_group(QWidget* body, QObject* ctx);
  QGroupBox* run_group(QWidget* body, QObject* ctx);
  QGroupBox* parameters_group(QWidget* body, QObject* ctx);
  QGroupBox* futures_group(QWidget* body, QObject* ctx);
};

namespace {
QPushButton* button(const QString& text, const char* name, QWidget* parent, const QString& tip = {}) {
  auto* b = new QPushButton(text, parent);
  b->setObjectName(name);
  if (!tip.isEmpty()) b->setToolTip(tip);
  return b;
}

QLineEdit* line_edit(const QString& text, const char* name, QWidget* parent, const QString& tip = {}) {
  auto* e = new QLineEdit(text, parent);
  e->setObjectName(name);
  if (!tip.isEmpty()) e->setToolTip(tip);
  return e;
}
}  // namespace

QGroupBox* pqRewindSteeringPanel::Internals::collector_group(QWidget* body, QObject* ctx) {
  auto* group = new QGroupBox("Collector", body);
  group->setObjectName("collector");
  auto* cf = new QFormLayout(group);
  host = line_edit("127.0.0.1", "host", group);
  port = new QSpinBox(group);
  port->setObjectName("port");
  port->setRange(1, 65535);
  port->setValue(7400);
  token = line_edit("", "token", group);
  token->setEchoMode(QLineEdit::Password);
  token_file = line_edit("", "token_file", group,
                         "A file holding the token (chmod 600), used when Token is empty; empty too: REWIND_TOKEN, REWIND_TOKEN_FILE");
  cf->addRow("Host", host);
  cf->addRow("Port", port);
  cf->addRow("Token", token);
  cf->addRow("Token file", token_file);
  auto* cb = new QHBoxLayout();
  auto* from_source = button("From live source", "from_source", group,
                             "Host, port and token of the selected Rewind Live Source (or of the only one)");
  auto* connect = button("Connect", "connect", group);
  cb->addWidget(from_source);
  cb->addWidget(connect);
  cf->addRow(cb);
  QObject::connect(from_source, &QPushButton::clicked, ctx, [this] { take_source_settings(); });
  QObject::connect(connect, &QPushButton::clicked, ctx, [this] {
    client.reset();
    act([this](col::Client& c) {
      fetch_run(c);
      return QString("connected to %1 (%2 parameters)").arg(QString::fromStdString(c.server().server)).arg(new_parameters->size());
    });
  });
  return group;
}

QGroupBox* pqRewindSteeringPanel::Internals::run_group(QWidget* body, QObject* ctx) {
  auto* group = new QGroupBox("Run", body);
  group->setObjectName("run");
  auto* rl = new QVBoxLayout(group);
  state = new QLabel("not connected", group);
  state->setObjectName("state_name");
  state->setStyleSheet("font-weight: bold");
  rl->addWidget(state);
  status = new QLabel(group);
  status->setObjectName("state");
  status->setWordWrap(true);
  status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  rl->addWidget(status);
  auto* rb = new QHBoxLayout();
  auto* refresh = button("Status", "status", group);
  auto* pause = button("Pause", "pause", group);
  auto* resume = button("Resume", "resume", group);
  auto* stop = button("Stop", "stop", group);
  for (auto* b : {refresh, pause, resume, stop}) rb->addWidget(b);
  rl->addLayout(rb);
  auto* fl = new QHBoxLayout();
  following = new QCheckBox("Follow the run every", group);
  following->setObjectName("follow");
  following->setToolTip("Refresh the selected Rewind Live Source, the compared futures and the status at this interval");
  auto* interval = new QDoubleSpinBox(group);
  interval->setObjectName("interval");
  interval->setRange(0.2, 3600);
  interval->setValue(2.0);
  interval->setSuffix(" s");
  fl->addWidget(following);
  fl->addWidget(interval);
  rl->addLayout(fl);
  follow = new QTimer(ctx);
  QObject::connect(following, &QCheckBox::toggled, ctx, [this, interval](bool on) {
    if (on) follow->start(static_cast<int>(interval->value() * 1000));
    else follow->stop();
  });
  QObject::connect(interval, QOverload<double>::of(&QDoubleSpinBox::valueChanged), ctx,
                   [this](double s) { follow->setInterval(static_cast<int>(s * 1000)); });
  QObject::connect(follow, &QTimer::timeout, ctx, [this] { follow_tick(); });
  QObject::connect(refresh, &QPushButton::clicked, ctx, [this] {
    act([this](col::Client& c) {
      fetch_status(c);
      return QString();
    });
  });
  const auto control = [this](col::ControlAction a) {
    act([this, a](col::Client& c) {
      const auto r = off_gui([&, file = future->text().toStdString()] { return c.control(a, file); });
      if (a == col::ControlAction::stop) {
        fetch_status(c);
      } else {
        fetch_run(c, r);
        refresh_live_source();
      }
      return QString("%1 at step %2").arg(col::to_string(r.state)).arg(r.step);
    });
  };
  QObject::connect(pause, &QPushButton::clicked, ctx, [control] { control(col::ControlAction::pause); });
  QObject::connect(resume, &QPushButton::clicked, ctx, [control] { control(col::ControlAction::resume); });
  QObject::connect(stop, &QPushButton::clicked, ctx, [control] { control(col::ControlAction::stop); });
  return group;
}

QGroupBox* pqRewindSteeringPanel::Internals::parameters_group(QWidget* body, QObject* ctx) {
  auto* group = new QGroupBox("Parameters", body);
  group->setObjectName("parameters");
  auto* pl = new QVBoxLayout(group);
  form = new pv::ParameterForm(group);
  form->setObjectName("form");
  auto* scroll = new QScrollArea(group);
  scroll->setObjectName("scroll");
  scroll->setWidgetResizable(true);
  scroll->setWidget(form);
  pl->addWidget(scroll);
  auto* apply = button("Apply changes", "apply", group, "Set the edited parameters from the run's next step on");
  pl->addWidget(apply);
  auto* bf = new QFormLayout();
  from = line_edit("latest", "from", group,
                   "A committed step: latest, N (step), #i (i-th committed step), t=T (last step at or before T)");
  output = line_edit("", "output", group);
  output->setPlaceholderText("(chosen by the run)");
  bf->addRow("Branch from", from);
  bf->addRow("Into file", output);
  pl->addLayout(bf);
  auto* branch = button("Branch with changes", "branch", group, "Start a branch from that step with the edited parameters");
  pl->addWidget(branch);
  QObject::connect(apply, &QPushButton::clicked, ctx, [this] {
    const auto values = form->changed();
    if (values.empty()) return show("no parameter edited", true);
    act([this, values, file = future->text().toStdString()](col::Client& c) {
      const auto r = off_gui([&] { return c.set(values, file); });
      fetch_run(c);
      refresh_live_source();
      return QString("%1 value(s) in force from step %2").arg(r.values.size()).arg(r.step);
    });
  });
  QObject::connect(branch, &QPushButton::clicked, ctx, [this] {
    col::BranchRequest req;
    req.from = from->text().toStdString();
    req.output = output->text().toStdString();
    req.values = form->changed();
    act([this, req](col::Client& c) {
      const auto r = off_gui([&] { return c.branch(req); });
      fetch_run(c);
      refresh_live_source();
      return QString("branch %1 from step %2 of %3").arg(QString::fromStdString(r.file)).arg(r.step).arg(QString::fromStdString(r.parent));
    });
  });
  return group;
}

QGroupBox* pqRewindSteeringPanel::Internals::futures_group(QWidget* body, QObject* ctx) {
  auto* group = new QGroupBox("Futures", body);
  group->setObjectName("futures");
  auto* ul = new QVBoxLayout(group);
  auto* uf = new QFormLayout();
  future = line_edit("", "future", group, "The file of one future: Pause, Resume, Stop and Apply changes act on it alone");
  future->setPlaceholderText("(every future)");
  uf->addRow("Act on future", future);
  ul->addLayout(uf);
  fork_rows = new QLabel(group);
  fork_rows->setObjectName("fork_rows");
  fork_rows->setWordWrap(true);
  ul->addWidget(fork_rows);
  auto* ub = new QHBoxLayout();
  auto* add_future = button("Add future", "add_future", group,
                            "One more future for the next fork, with the parameters edited above (none: the run unchanged)");
  auto* clear_futures = button("Clear", "clear_futures", group);
  auto* fork_button = button("Fork", "fork", group,
                             "Fork the run (or the future named above) at Branch from into these futures, computed together");
  auto* compare_button = button("Compare", "compare", group,
                                "One view per running future, cameras linked, one colour scale fitted to all; Follow updates them");
  for (auto* b : {add_future, clear_futures, fork_button, compare_button}) ub->addWidget(b);
  ul->addLayout(ub);
  show_fork();
  QObject::connect(add_future, &QPushButton::clicked, ctx, [this] {
    next_fork.push_back(form->changed());
    show_fork();
  });
  QObject::connect(clear_futures, &QPushButton::clicked, ctx, [this] {
    next_fork.clear();
    show_fork();
  });
  QObject::connect(fork_button, &QPushButton::clicked, ctx, [this] {
    if (next_fork.empty()) return show("no future to fork into: Add future, once per future", true);
    col::BranchRequest req;
    req.from = from->text().toStdString();
    req.file = future->text().toStdString();
    for (const auto& values : next_fork) req.futures.push_back({values, ""});
    act([this, req](col::Client& c) {
      const auto r = off_gui([&] { return c.branch(req); });
      next_fork.clear();
      show_fork();
      fetch_run(c);
      refresh_live_source();
      QStringList files;
      for (const auto& f : r.files) files << QString::fromStdString(f);
      return QString("forked %1 futures from step %2 of %3: %4").arg(r.files.size()).arg(r.step)
          .arg(QString::fromStdString(r.parent), files.join(", "));
    });
  });
  QObject::connect(compare_button, &QPushButton::clicked, ctx, [this] { compare(); });
  return group;
}

pqRewindSteeringPanel::pqRewindSteeringPanel(const QString& title, QWidget* parent, Qt::WindowFlags flags)
    : QDockWidget(title, parent, flags), d_(std::make_unique<Internals>()) {
  build();
}

pqRewindSteeringPanel::pqRewindSteeringPanel(QWidget* parent, Qt::WindowFlags flags)
    : QDockWidget(parent, flags), d_(std::make_unique<Internals>()) {
  build();
}

pqRewindSteeringPanel::~pqRewindSteeringPanel() = default;

void pqRewindSteeringPanel::build() {
  setWindowTitle("Rewind Steering");
  setObjectName("RewindSteeringPanel");
  auto* body = new QWidget(this);
  body->setObjectName("body");
  auto* v = new QVBoxLayout(body);
  v->addWidget(d_->collector_group(body, this));
  v->addWidget(d_->run_group(body, this));
  v->addWidget(d_->parameters_group(body, this), 1);
  v->addWidget(d_->futures_group(body, this));
  d_->message = new QLabel(body);
  d_->message->setObjectName("message");
  d_->message->setWordWrap(true);
  d_->message->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(d_->message);
  setWidget(body);
  // Opens when asked (View → Rewind Steering), not whenever the plugin loads: an
  // explicitly hidden dock stays hidden when ParaView adds it to its main window.
  hide();
}
