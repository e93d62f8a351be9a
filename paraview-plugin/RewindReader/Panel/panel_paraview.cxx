// Python's headers first: they use the word `slots`, which Qt's headers define away.
#ifdef REWIND_PANEL_PYTHON
#include "vtkPython.h"
#include "vtkPythonInterpreter.h"
#include "vtkSmartPyObject.h"
#endif
#include "panel_paraview.h"

#include <vector>

#include "pqActiveObjects.h"
#include "pqApplicationCore.h"
#include "pqPipelineSource.h"
#include "pqServerManagerModel.h"
#include "vtkSMSourceProxy.h"

namespace rwd::paraview {

namespace {
bool is_live(pqPipelineSource* source) {
  auto* proxy = source ? vtkSMSourceProxy::SafeDownCast(source->getProxy()) : nullptr;
  return proxy && std::string(proxy->GetXMLName()) == "RewindLiveSource";
}
}  // namespace

vtkSMSourceProxy* pick_live_source(QString& why) {
  pqPipelineSource* active = pqActiveObjects::instance().activeSource();
  if (is_live(active)) return vtkSMSourceProxy::SafeDownCast(active->getProxy());
  std::vector<pqPipelineSource*> live;
  for (auto* s : pqApplicationCore::instance()->getServerManagerModel()->findItems<pqPipelineSource*>())
    if (is_live(s)) live.push_back(s);
  if (live.size() == 1) return vtkSMSourceProxy::SafeDownCast(live.front()->getProxy());
  why = live.empty() ? QString("no Rewind Live Source to take the settings of (Sources → Rewind Live Source)")
                     : QString("%1 Rewind Live Sources: select the one to take the settings of").arg(live.size());
  return nullptr;
}

QString source_name(vtkSMSourceProxy* proxy) {
  auto* s = pqApplicationCore::instance()->getServerManagerModel()->findItem<pqPipelineSource*>(proxy);
  return s ? s->getSMName() : QString();
}

void refresh(vtkSMSourceProxy* proxy) {
  proxy->InvokeCommand("Refresh");
  proxy->UpdatePipeline();
  pqApplicationCore::instance()->render();
}

QString call_compare(const char* function, const QStringList& args) {
#ifdef REWIND_PANEL_PYTHON
  vtkPythonInterpreter::Initialize();  // once; then a no-op
  vtkPythonScopeGilEnsurer gil;
  // paraview.servermanager installs the finder of the plugins' Python modules (and takes
  // the GUI's session); ParaView's own Python shell may not have run yet.
  vtkSmartPyObject simple(PyImport_ImportModule("paraview.simple"));
  vtkSmartPyObject module(simple ? PyImport_ImportModule("rewind_compare") : nullptr);
  vtkSmartPyObject call(module ? PyObject_GetAttrString(module, function) : nullptr);
  vtkSmartPyObject tuple(PyTuple_New(args.size()));
  for (int i = 0; i < args.size(); ++i) PyTuple_SET_ITEM(tuple.GetPointer(), i, PyUnicode_FromString(args[i].toUtf8().constData()));
  vtkSmartPyObject answer(call ? PyObject_CallObject(call, tuple) : nullptr);
  const char* text = answer ? PyUnicode_AsUTF8(answer) : nullptr;
  if (text) return QString::fromUtf8(text);
  PyErr_Print();  // the traceback goes to the output window
  return QString("error: ParaView's Python could not run rewind_compare.%1 (see the output window)").arg(function);
#else
  (void)args;
  return QString("error: %1 needs ParaView with Python").arg(function);
#endif
}

}  // namespace rwd::paraview
