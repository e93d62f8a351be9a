#include "pqRewindViewBehavior.h"

#include <QPointer>
#include <QVariant>
#include <cstring>

#include "pqApplicationCore.h"
#include "pqDataRepresentation.h"
#include "pqOutputPort.h"
#include "pqPipelineSource.h"
#include "pqServerManagerModel.h"
#include "pqView.h"
#include "vtkDataObject.h"
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
}

void pqRewindViewBehavior::representationAdded(pqRepresentation* r) {
  auto* repr = qobject_cast<pqDataRepresentation*>(r);
  if (!shows_rewind_window(repr) || repr->property("rewind_watched").toBool()) return;
  repr->setProperty("rewind_watched", true);
  firstShow(repr);
  // At every update of the window, inside the view's update and before it draws: the
  // colour map's range is set, nothing else changes.
  QObject::connect(repr, &pqDataRepresentation::dataUpdated, this, [repr = QPointer<pqDataRepresentation>(repr)] {
    if (repr) followRange(repr);
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
    vtkSMPVRepresentationProxy::RescaleTransferFunctionToDataRange(proxy, false, false);
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
  // force = false: a range the user locked stays.
  if (vtkSMPVRepresentationProxy::GetUsingScalarColoring(repr->getProxy()))
    vtkSMPVRepresentationProxy::RescaleTransferFunctionToDataRange(repr->getProxy(), false, false);
}
