#include "pqRewindAutoStart.h"

#include <QPointer>
#include <QTimer>
#include <memory>
#include <string>

#include "pqAnimationScene.h"
#include "pqApplicationCore.h"
#include "pqPipelineSource.h"
#include "pqServerManagerModel.h"
#include "vtkSMPropertyHelper.h"
#include "vtkSMProxy.h"
#include "vtkWeakPointer.h"

pqRewindAutoStart::pqRewindAutoStart(QObject* parent) : QObject(parent) {}

pqRewindAutoStart::~pqRewindAutoStart() = default;

void pqRewindAutoStart::startup() {
  QObject::connect(pqApplicationCore::instance()->getServerManagerModel(), &pqServerManagerModel::sourceAdded, this,
                   &pqRewindAutoStart::sourceAdded);
}

void pqRewindAutoStart::sourceAdded(pqPipelineSource* source) {
  vtkSMProxy* proxy = source->getProxy();
  if (!proxy || std::string(proxy->GetXMLName()) != "RewindReader") return;
  // Only a reader the user opens (File → Open: not applied yet once it is registered),
  // not one a state file or a script makes with its own time.
  QTimer::singleShot(0, this, [this, src = QPointer<pqPipelineSource>(source)] {
    if (src && src->modifiedState() == pqProxy::UNINITIALIZED) goToLastOnFirstData(src);
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
