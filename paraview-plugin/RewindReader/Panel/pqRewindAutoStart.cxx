#include "pqRewindAutoStart.h"

#include <QPointer>
#include <QTimer>
#include <memory>
#include <string>

#include "pqAnimationScene.h"
#include "pqApplicationCore.h"
#include "pqDataRepresentation.h"
#include "pqScalarBarRepresentation.h"
#include "pqView.h"
#include "pqPipelineSource.h"
#include "pqServerManagerModel.h"
#include "vtkSMProperty.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMProxy.h"
#include "vtkSMTransferFunctionProxy.h"
#include "vtkWeakPointer.h"

pqRewindAutoStart::pqRewindAutoStart(QObject* parent) : QObject(parent) {}

pqRewindAutoStart::~pqRewindAutoStart() = default;

void pqRewindAutoStart::startup() {
  auto* model = pqApplicationCore::instance()->getServerManagerModel();
  QObject::connect(model, &pqServerManagerModel::sourceAdded, this, &pqRewindAutoStart::sourceAdded);
  // Scalar bar titles: when a Rewind source's display changes its colouring, and when a
  // scalar bar appears (ParaView titles it with the array name first).
  QObject::connect(model, &pqServerManagerModel::representationAdded, this, [this](pqRepresentation* r) {
    auto* repr = qobject_cast<pqDataRepresentation*>(r);
    if (!repr) return;
    QObject::connect(repr, &pqDataRepresentation::colorArrayNameModified, this, [this] { labelScalarBarsSoon(); });
    labelScalarBarsSoon();
  });
  QObject::connect(model, &pqServerManagerModel::itemAdded, this, [this](pqServerManagerModelItem* item) {
    if (qobject_cast<pqScalarBarRepresentation*>(item)) labelScalarBarsSoon();
  });
}

void pqRewindAutoStart::labelScalarBarsSoon() {
  QTimer::singleShot(0, this, [] {
    for (auto* repr : pqApplicationCore::instance()->getServerManagerModel()->findItems<pqDataRepresentation*>())
      labelScalarBar(repr);
  });
}

void pqRewindAutoStart::labelScalarBar(pqDataRepresentation* repr) {
  pqPipelineSource* input = repr->getInput();
  vtkSMProxy* source = input ? input->getProxy() : nullptr;
  if (!source || !source->GetProperty("VariableUnits") || !repr->getView() || !repr->getProxy()->GetProperty("ColorArrayName"))
    return;
  const char* array = vtkSMPropertyHelper(repr->getProxy(), "ColorArrayName").GetInputArrayNameToProcess();
  vtkSMProxy* bar = vtkSMTransferFunctionProxy::FindScalarBarRepresentation(repr->getLookupTableProxy(), repr->getView()->getProxy());
  if (!array || !*array || !bar) return;
  source->UpdatePropertyInformation(source->GetProperty("VariableUnits"));
  vtkSMPropertyHelper units(source, "VariableUnits");
  for (unsigned i = 0; i + 1 < units.GetNumberOfElements(); i += 2) {
    const std::string name = units.GetAsString(i), unit = units.GetAsString(i + 1);
    if (name != array || unit.empty()) continue;
    vtkSMPropertyHelper title(bar, "Title");
    if (std::string(title.GetAsString()) != name) return;  // the user's own title, or done
    title.Set((name + " [" + unit + "]").c_str());
    bar->UpdateVTKObjects();
    return;
  }
}

void pqRewindAutoStart::sourceAdded(pqPipelineSource* source) {
  vtkSMProxy* proxy = source->getProxy();
  if (proxy && std::string(proxy->GetXMLName()) == "RewindLiveSource") return boxOnDomainOnFirstData(source);
  if (!proxy || std::string(proxy->GetXMLName()) != "RewindReader") return;
  // Only a reader the user opens (File → Open: not applied yet once it is registered),
  // not one a state file or a script makes with its own time.
  QTimer::singleShot(0, this, [this, src = QPointer<pqPipelineSource>(source)] {
    if (src && src->modifiedState() == pqProxy::UNINITIALIZED) goToLastOnFirstData(src);
  });
}

void pqRewindAutoStart::boxOnDomainOnFirstData(pqPipelineSource* source) {
  // The live source knows its domain once it has connected (its first data): a box
  // still at its defaults from before (0 0 0, 1 1 1) then goes onto the domain.
  auto once = std::make_shared<QMetaObject::Connection>();
  *once = QObject::connect(source, QOverload<pqPipelineSource*>::of(&pqPipelineSource::dataUpdated), this,
                           [once, live = vtkWeakPointer<vtkSMProxy>(source->getProxy())](pqPipelineSource*) {
    if (!live) return;
    live->UpdatePropertyInformation();
    const vtkSMPropertyHelper domain(live, "DomainExtent");
    if (domain.GetAsDouble(1) <= 0 && domain.GetAsDouble(3) <= 0) return;  // not connected yet: wait for data
    QObject::disconnect(*once);
    vtkSMProperty* position = live->GetProperty("BoxPosition");
    vtkSMProperty* size = live->GetProperty("BoxSize");
    if (!position->IsValueDefault() || !size->IsValueDefault()) return;  // the user's box
    position->ResetToDomainDefaults();
    size->ResetToDomainDefaults();
    live->UpdateVTKObjects();
  });
}

void pqRewindAutoStart::goToLastOnFirstData(pqPipelineSource* source) {
  // Once: the first data of this reader (its first Apply), then the event loop's next
  // turn, when the Apply (and the scene's own time choice) is over.
  auto once = std::make_shared<QMetaObject::Connection>();
  *once = QObject::connect(source, QOverload<pqPipelineSource*>::of(&pqPipelineSource::dataUpdated), this,
                           [once, reader = vtkWeakPointer<vtkSMProxy>(source->getProxy())](pqPipelineSource*) {
    QObject::disconnect(*once);
    QTimer::singleShot(0, [reader] {
      if (!reader) return;  // deleted meanwhile
      vtkSMPropertyHelper times(reader, "TimestepValues");
      if (times.GetNumberOfElements() == 0) return;
      const double last = times.GetAsDouble(times.GetNumberOfElements() - 1);
      for (auto* scene : pqApplicationCore::instance()->getServerManagerModel()->findItems<pqAnimationScene*>())
        scene->setAnimationTime(last);
    });
  });
}
