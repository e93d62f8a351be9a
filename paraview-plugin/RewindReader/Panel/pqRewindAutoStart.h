// pqRewindAutoStart: what the plugin does in the GUI without being asked (an auto-start
// interface). A Rewind Run File opens at its last committed step: the first time a new
// reader's data arrives, the animation scene goes to the reader's last time (after
// ParaView's own "Default Time Step" choice on Apply, which would show t = 0, the
// uniform initial state, and a colour range of 0..1 that saturates every later step);
// only readers the user opens (File → Open, pending their first Apply), not those a
// state file or a script creates; later changes of time are the user's.
// Scalar bars of a Rewind source's arrays are titled with their unit ("u [m/s]", from
// the source's VariableUnits) unless the user gave them a title of their own.
// A Rewind Live Source's box goes onto the run's domain once it has connected (its
// domain is unknown before), unless the user has moved it.
#pragma once
#include <QObject>

class pqDataRepresentation;
class pqPipelineSource;

class pqRewindAutoStart : public QObject {
 public:
  explicit pqRewindAutoStart(QObject* parent = nullptr);
  ~pqRewindAutoStart() override;
  void startup();
  void shutdown() {}

 private:
  void sourceAdded(pqPipelineSource* source);
  void goToLastOnFirstData(pqPipelineSource* source);
  void boxOnDomainOnFirstData(pqPipelineSource* source);
  void labelScalarBarsSoon();
  static void labelScalarBar(pqDataRepresentation* repr);
};
