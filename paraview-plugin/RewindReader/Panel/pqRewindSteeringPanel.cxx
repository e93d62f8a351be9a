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
#include <QTimer>
#include <QVBoxLayout>
#include <QtDebug>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <future>
#include <optional>
#include <sstream>
#include <string>

#include "client_errors.hpp"
#include "parameter_form.hpp"
#include "pqActiveObjects.h"
#include "pqApplicationCore.h"
#include "pqPipelineSource.h"
#include "rewind/collector/client.hpp"
#include "rewind/collector/token.hpp"
#include "vtkSMPropertyHelper.h"
#include "vtkSMSourceProxy.h"

namespace col = rwd::collector;

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
  rwd::paraview::ParameterForm* form = nullptr;
  QTimer* follow = nullptr;  ///< refreshes the live source (and the status) at an interval
  std::optional<col::Client> client;
  bool busy = false;  ///< a request is on its way (off_gui): further actions wait their turn
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

  /// Runs `f` on a connected client; a failure is one line in the panel and the output
  /// window, and drops the connection (the next action connects anew).
  void act(const std::function<QString(col::Client&)>& f) {
    if (busy) return show("still waiting for the collector's answer to the previous request", true);
    try {
      if (!client || !client->connected()) {
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
      show(f(*client), false);
    } catch (const std::exception& e) {
      if (client && !client->connected()) client.reset();
      show(QString::fromStdString(rwd::paraview::describe_client_error(e, where(), timeout())), true);
    }
  }

  static QString describe(const col::RunStatus& s) {
    std::ostringstream o;
    o << col::to_string(s.state) << " at step " << s.step << " (t = " << s.time << "), " << s.steps_per_second
      << " steps/s, " << s.ranks << " ranks\n" << s.file;
    if (!s.parent.empty()) o << "\nbranched from " << s.parent;
    return QString::fromStdString(o.str());
  }

  void show_status(const col::RunStatus& s) {
    state->setText(QString::fromStdString(col::to_string(s.state)));
    status->setText(describe(s));
  }

  void update_status(col::Client& c) { show_status(off_gui([&] { return c.status(); })); }

  /// After a command: the run as it is now (state and parameters; a branch or a set
  /// changes the values in force, so the edited boxes are replaced by the run's).
  void update_run(col::Client& c) {
    update_status(c);
    form->set_parameters(off_gui([&] { return c.parameters(); }));
  }

  /// After pause / resume: as update_run, but the state is the command's reply while
  /// the collector's status has not caught up with it (the job reports its status at
  /// step boundaries: right after a resume it may still say paused).
  void update_run(col::Client& c, const col::ControlReply& r) {
    auto s = off_gui([&] { return c.status(); });
    if (s.step <= r.step) s.state = r.state;
    show_status(s);
    form->set_parameters(off_gui([&] { return c.parameters(); }));
  }

  /// The active source, if it is a Rewind Live Source.
  static vtkSMSourceProxy* live_source() {
    pqPipelineSource* src = pqActiveObjects::instance().activeSource();
    auto* proxy = src ? vtkSMSourceProxy::SafeDownCast(src->getProxy()) : nullptr;
    return proxy && std::string(proxy->GetXMLName()) == "RewindLiveSource" ? proxy : nullptr;
  }

  /// The live source shows the run's new state.
  static void refresh_live_source() {
    if (vtkSMSourceProxy* proxy = live_source()) {
      proxy->InvokeCommand("Refresh");
      proxy->UpdatePipeline();
      pqApplicationCore::instance()->render();
    }
  }
};

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
  auto& d = *d_;
  auto* body = new QWidget(this);
  body->setObjectName("body");
  auto* v = new QVBoxLayout(body);

  auto* conn = new QGroupBox("Collector", body);
  conn->setObjectName("collector");
  auto* cf = new QFormLayout(conn);
  d.host = new QLineEdit("127.0.0.1", conn);
  d.host->setObjectName("host");
  d.port = new QSpinBox(conn);
  d.port->setObjectName("port");
  d.port->setRange(1, 65535);
  d.port->setValue(7400);
  d.token = new QLineEdit(conn);
  d.token->setObjectName("token");
  d.token->setEchoMode(QLineEdit::Password);
  cf->addRow("Host", d.host);
  cf->addRow("Port", d.port);
  d.token_file = new QLineEdit(conn);
  d.token_file->setObjectName("token_file");
  d.token_file->setToolTip("A file holding the token (chmod 600), used when Token is empty; empty too: REWIND_TOKEN, REWIND_TOKEN_FILE");
  cf->addRow("Token", d.token);
  cf->addRow("Token file", d.token_file);
  auto* cb = new QHBoxLayout();
  auto* from_source = new QPushButton("From live source", conn);
  from_source->setObjectName("from_source");
  from_source->setToolTip("Host, port and token of the active Rewind Live Source");
  auto* connect = new QPushButton("Connect", conn);
  connect->setObjectName("connect");
  cb->addWidget(from_source);
  cb->addWidget(connect);
  cf->addRow(cb);
  v->addWidget(conn);

  auto* run = new QGroupBox("Run", body);
  run->setObjectName("run");
  auto* rl = new QVBoxLayout(run);
  d.state = new QLabel("not connected", run);
  d.state->setObjectName("state_name");
  d.state->setStyleSheet("font-weight: bold");
  rl->addWidget(d.state);
  d.status = new QLabel(run);
  d.status->setObjectName("state");
  d.status->setWordWrap(true);
  d.status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  rl->addWidget(d.status);
  auto* rb = new QHBoxLayout();
  auto* status = new QPushButton("Status", run);
  auto* pause = new QPushButton("Pause", run);
  auto* resume = new QPushButton("Resume", run);
  auto* stop = new QPushButton("Stop", run);
  for (auto* b : {status, pause, resume, stop}) rb->addWidget(b), b->setObjectName(b->text().toLower());
  rl->addLayout(rb);
  auto* fl = new QHBoxLayout();
  auto* follow = new QCheckBox("Follow the run every", run);
  follow->setObjectName("follow");
  follow->setToolTip("Refresh the active Rewind Live Source (and the status) at this interval");
  auto* interval = new QDoubleSpinBox(run);
  interval->setObjectName("interval");
  interval->setRange(0.2, 3600);
  interval->setValue(2.0);
  interval->setSuffix(" s");
  fl->addWidget(follow);
  fl->addWidget(interval);
  rl->addLayout(fl);
  v->addWidget(run);
  d.follow = new QTimer(this);

  auto* params = new QGroupBox("Parameters", body);
  params->setObjectName("parameters");
  auto* pl = new QVBoxLayout(params);
  d.form = new rwd::paraview::ParameterForm(params);
  d.form->setObjectName("form");
  auto* scroll = new QScrollArea(params);
  scroll->setObjectName("scroll");
  scroll->setWidgetResizable(true);
  scroll->setWidget(d.form);
  pl->addWidget(scroll);
  auto* apply = new QPushButton("Apply changes", params);
  apply->setObjectName("apply");
  apply->setToolTip("Set the edited parameters from the run's next step on");
  pl->addWidget(apply);
  auto* bf = new QFormLayout();
  d.from = new QLineEdit("latest", params);
  d.from->setObjectName("from");
  d.from->setToolTip("A committed step: latest, N (step), #i (i-th committed step), t=T (last step at or before T)");
  d.output = new QLineEdit(params);
  d.output->setObjectName("output");
  d.output->setPlaceholderText("(chosen by the run)");
  bf->addRow("Branch from", d.from);
  bf->addRow("Into file", d.output);
  pl->addLayout(bf);
  auto* branch = new QPushButton("Branch with changes", params);
  branch->setObjectName("branch");
  branch->setToolTip("Start a branch from that step with the edited parameters");
  pl->addWidget(branch);
  v->addWidget(params, 1);

  d.message = new QLabel(body);
  d.message->setObjectName("message");
  d.message->setWordWrap(true);
  d.message->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(d.message);
  setWidget(body);
  // Opens when asked (View → Rewind Steering), not whenever the plugin loads: an
  // explicitly hidden dock stays hidden when ParaView adds it to its main window.
  hide();

  Internals* in = d_.get();
  QObject::connect(from_source, &QPushButton::clicked, this, [in] {
    vtkSMSourceProxy* proxy = Internals::live_source();
    if (!proxy) return in->show("the active source is not a Rewind Live Source", true);
    in->host->setText(vtkSMPropertyHelper(proxy, "Host").GetAsString());
    in->port->setValue(vtkSMPropertyHelper(proxy, "PortNumber").GetAsInt());
    in->token->setText(vtkSMPropertyHelper(proxy, "Token").GetAsString());
    in->token_file->setText(vtkSMPropertyHelper(proxy, "TokenFile").GetAsString());
    in->client.reset();
    in->show("settings of the active live source", false);
  });
  QObject::connect(connect, &QPushButton::clicked, this, [in] {
    in->client.reset();
    in->act([in](col::Client& c) {
      in->update_run(c);
      return QString("connected to %1 (%2 parameters)").arg(QString::fromStdString(c.server().server)).arg(in->form->size());
    });
  });
  QObject::connect(follow, &QCheckBox::toggled, this, [in, interval](bool on) {
    if (on) in->follow->start(static_cast<int>(interval->value() * 1000));
    else in->follow->stop();
  });
  QObject::connect(interval, QOverload<double>::of(&QDoubleSpinBox::valueChanged), this, [in](double s) {
    in->follow->setInterval(static_cast<int>(s * 1000));
  });
  QObject::connect(d.follow, &QTimer::timeout, this, [in, follow] {
    if (in->busy) return;  // the previous tick (or an action) is still waiting
    Internals::refresh_live_source();
    if (!in->client || !in->client->connected()) return;
    try {
      in->update_status(*in->client);
    } catch (const std::exception& e) {  // the run ended or the collector went away: stop following
      follow->setChecked(false);
      in->client.reset();
      in->show(QString::fromStdString(rwd::paraview::describe_client_error(e, in->where(), Internals::timeout())), true);
    }
  });
  QObject::connect(status, &QPushButton::clicked, this, [in] {
    in->act([in](col::Client& c) {
      in->update_status(c);
      return QString();
    });
  });
  const auto control = [in](col::ControlAction a) {
    in->act([in, a](col::Client& c) {
      const auto r = in->off_gui([&] { return c.control(a); });
      if (a == col::ControlAction::stop) in->update_status(c);
      else in->update_run(c, r);
      if (a != col::ControlAction::stop) Internals::refresh_live_source();
      return QString("%1 at step %2").arg(col::to_string(r.state)).arg(r.step);
    });
  };
  QObject::connect(pause, &QPushButton::clicked, this, [control] { control(col::ControlAction::pause); });
  QObject::connect(resume, &QPushButton::clicked, this, [control] { control(col::ControlAction::resume); });
  QObject::connect(stop, &QPushButton::clicked, this, [control] { control(col::ControlAction::stop); });
  QObject::connect(apply, &QPushButton::clicked, this, [in] {
    const auto values = in->form->changed();
    if (values.empty()) return in->show("no parameter edited", true);
    in->act([in, values](col::Client& c) {
      const auto r = in->off_gui([&] { return c.set(values); });
      in->update_run(c);
      Internals::refresh_live_source();
      return QString("%1 value(s) in force from step %2").arg(r.values.size()).arg(r.step);
    });
  });
  QObject::connect(branch, &QPushButton::clicked, this, [in] {
    col::BranchRequest req;
    req.from = in->from->text().toStdString();
    req.output = in->output->text().toStdString();
    req.values = in->form->changed();
    in->act([in, req](col::Client& c) {
      const auto r = in->off_gui([&] { return c.branch(req); });
      in->update_run(c);
      Internals::refresh_live_source();
      return QString("branch %1 from step %2 of %3").arg(QString::fromStdString(r.file)).arg(r.step).arg(QString::fromStdString(r.parent));
    });
  });
}
