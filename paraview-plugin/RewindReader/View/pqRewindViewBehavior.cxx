#include "pqRewindViewBehavior.h"

#include <QPointer>
#include <QTimer>
#include <QVariant>
#include <cmath>
#include <cstring>
#include <string>

#include "pqApplicationCore.h"
#include "pqDataRepresentation.h"
#include "pqOutputPort.h"
#include "pqPipelineSource.h"
#include "pqServerManagerModel.h"
#include "pqView.h"
#include "vtkDataObject.h"
#include "vtkSMOutputPort.h"
#include "vtkSMTransferFunctionManager.h"
#include "vtkSMTransferFunctionProxy.h"
#include "vtkPVArrayInformation.h"
#include "vtkPVDataInformation.h"
#include "vtkPVRenderView.h"
#include "vtkSMPVRepresentationProxy.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMProxy.h"
#include "vtkSMRenderViewProxy.h"

namespace {
/// The window port (0) of a Rewind source: the representations this behaviour looks after.
bool shows_rewind_window(pqDataRepresentation* repr) {
  pqOutputPort* port = repr ? repr->getOutputPortFromInput() : nullptr;
  vtkSMProxy* source = port ? port->getSource()->getProxy() : nullptr;
  if (!source || port->getPortNumber() != 0) return false;
  const char* name = source->GetXMLName();
  return std::strcmp(name, "RewindReader") == 0 || std::strcmp(name, "RewindLiveSource") == 0;
}

/// The range of the cell array `repr` is coloured by over the grids shown, from the
/// step's statistics: the source's field data rewind_range_<array> (its two values;
/// ParaView's data information spans every piece). False when there is none (a file
/// without statistics, an older collector's live state, a derived array such as
/// velocity_magnitude).
bool statistics_range(pqDataRepresentation* repr, double range[2]) {
  vtkSMPropertyHelper colour(repr->getProxy(), "ColorArrayName", true);
  const char* name = colour.GetInputArrayNameToProcess();
  // The port's information is cached, and a view's update at a new time does not
  // invalidate it (measured: the previous step's range was taken): gathered afresh.
  if (pqOutputPort* port = repr->getOutputPortFromInput()) port->getOutputPortProxy()->InvalidateDataInformation();
  vtkPVDataInformation* data = repr->getInputDataInformation();
  if (!name || !*name || !data || colour.GetInputArrayAssociation() != vtkDataObject::FIELD_ASSOCIATION_CELLS)
    return false;
  vtkPVArrayInformation* a =
      data->GetArrayInformation(("rewind_range_" + std::string(name)).c_str(), vtkDataObject::FIELD);
  if (!a || a->GetNumberOfComponents() != 1) return false;
  a->GetComponentRange(0, range);
  return std::isfinite(range[0]) && std::isfinite(range[1]) && range[0] <= range[1];
}
}  // namespace

pqRewindViewBehavior::pqRewindViewBehavior(QObject* parent) : QObject(parent) {}

pqRewindViewBehavior::~pqRewindViewBehavior() = default;

void pqRewindViewBehavior::startup() {
  auto* model = pqApplicationCore::instance()->getServerManagerModel();
  QObject::connect(model, &pqServerManagerModel::viewAdded, this, &pqRewindViewBehavior::watch);
  for (auto* view : model->findItems<pqView*>()) watch(view);
}

void pqRewindViewBehavior::watch(pqView* view) {
  // The view's own signal: the representation is in the view by then (the model's
  // representationAdded comes before it has a view).
  QObject::connect(view, &pqView::representationAdded, this, &pqRewindViewBehavior::representationAdded);
  // At every update of the view that executes (a new time, a new window, Refresh, the
  // steering panel's Follow), before it draws: the colour maps of the Rewind windows it
  // shows are fitted, nothing else changes. The view's event, not the representation's
  // dataUpdated: a new time updates the view, not the representation's proxy.
  QObject::connect(view, &pqView::updateDataEvent, this, [view = QPointer<pqView>(view)] {
    if (!view) return;
    for (auto* r : view->getRepresentations()) {
      auto* repr = qobject_cast<pqDataRepresentation*>(r);
      if (repr && repr->isVisible() && repr->property("rewind_watched").toBool()) followRange(repr);
    }
  });
}

void pqRewindViewBehavior::representationAdded(pqRepresentation* r) {
  auto* repr = qobject_cast<pqDataRepresentation*>(r);
  if (!shows_rewind_window(repr) || repr->property("rewind_watched").toBool()) return;
  repr->setProperty("rewind_watched", true);
  firstShow(repr);
  // Another array picked: after ParaView's own rescale (the colour box's, ColorBy's),
  // hence queued, the range of the new array as shown.
  QObject::connect(repr, &pqDataRepresentation::colorArrayNameModified, this,
                   [repr = QPointer<pqDataRepresentation>(repr)] {
                     QTimer::singleShot(0, [repr] {
                       if (!repr) return;
                       followRange(repr);
                       repr->renderViewEventually();
                     });
                   });
}

void pqRewindViewBehavior::firstShow(pqDataRepresentation* repr) {
  vtkSMProxy* proxy = repr->getProxy();
  vtkSMProxy* view = repr->getView() ? repr->getView()->getProxy() : nullptr;
  vtkPVDataInformation* data = repr->getInputDataInformation();
  if (!view || !data) return;
  if (!vtkSMPVRepresentationProxy::GetUsingScalarColoring(proxy) &&
      data->GetArrayInformation("velocity_magnitude", vtkDataObject::CELL)) {
    vtkSMPVRepresentationProxy::SetScalarColoring(proxy, "velocity_magnitude", vtkDataObject::CELL);
    followRange(repr);
    vtkSMPVRepresentationProxy::SetScalarBarVisibility(proxy, view, true);
    proxy->UpdateVTKObjects();
  }
  double b[6];
  data->GetBounds(b);
  auto* render_view = vtkSMRenderViewProxy::SafeDownCast(view);
  if (render_view && b[0] <= b[1] && b[4] == b[5]) {  // a 2-D case: planes at one z
    vtkSMPropertyHelper(view, "InteractionMode").Set(vtkPVRenderView::INTERACTION_MODE_2D);
    const double centre[3] = {(b[0] + b[1]) / 2, (b[2] + b[3]) / 2, b[4]};
    const double eye[3] = {centre[0], centre[1], centre[2] + 1};
    const double up[3] = {0, 1, 0};
    vtkSMPropertyHelper(view, "CameraFocalPoint").Set(centre, 3);
    vtkSMPropertyHelper(view, "CameraPosition").Set(eye, 3);
    vtkSMPropertyHelper(view, "CameraViewUp").Set(up, 3);
    view->UpdateVTKObjects();
    render_view->ResetCamera(b, true);  // closest: the domain fills the view
  }
  repr->renderViewEventually();
}

void pqRewindViewBehavior::followRange(pqDataRepresentation* repr) {
  vtkSMProxy* proxy = repr->getProxy();
  if (!vtkSMPVRepresentationProxy::GetUsingScalarColoring(proxy)) return;
  vtkSMProxy* lut = vtkSMPropertyHelper(proxy, "LookupTable", true).GetAsProxy();
  // A range the user locked (the lock icon, a custom range: rescale mode "Never") stays.
  if (!lut ||
      vtkSMPropertyHelper(lut, "AutomaticRescaleRangeMode", true).GetAsInt() == vtkSMTransferFunctionManager::NEVER)
    return;
  double range[2];
  if (!statistics_range(repr, range)) {
    // No statistics of this array: the range of the data shown, as ParaView takes it.
    vtkSMPVRepresentationProxy::RescaleTransferFunctionToDataRange(proxy, false, false);
    return;
  }
  vtkSMTransferFunctionProxy::RescaleTransferFunction(lut, range, false);
  if (vtkSMProxy* opacity = vtkSMPropertyHelper(lut, "ScalarOpacityFunction", true).GetAsProxy())
    vtkSMTransferFunctionProxy::RescaleTransferFunction(opacity, range, false);
}
