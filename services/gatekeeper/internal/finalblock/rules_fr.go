package finalblock

// french is the reviewed French table.
var french = langSpec{
	tag: "fr",
	rules: []rule{
		// work
		done(ScopeWork, "(c'est|est|sont|tout est) (maintenant |désormais |bien |enfin |)(terminé|terminée|terminés|terminées|fini|finie|"+
			"fait|faite|réglé|réglée|corrigé|corrigée|corrigés|résolu|résolue|résolus|implémenté|implémentée)").
			nb("par via avec en dans selon pour à au lors de"),
		done(ScopeWork, "(terminé|fini)").pred(),
		done(ScopeWork, "(j'ai|nous avons|on a) (bien |déjà |enfin |)(terminé|fini|corrigé|résolu|implémenté|réglé)"),
		done(ScopeWork, "(a été|ont été) (corrigé|corrigée|corrigés|résolu|résolue|résolus|implémenté|implémentée|terminé|terminée)").
			nb("par via avec en dans"),
		done(ScopeWork, "(ça|cela|tout) (fonctionne|marche) (maintenant|désormais|correctement|bien|à nouveau|de nouveau)"),
		done(ScopeWork, "(ça|cela|tout) (fonctionne|marche)").fin(),
		// tests
		done(ScopeTests, "(tous les |les |)tests (unitaires |d'intégration |)(passent|sont passés|ont passé|réussissent|ont réussi|"+
			"sont verts|sont au vert|sont ok)"),
		// build
		done(ScopeBuild, "(le |la |)(build|compilation) (passe|réussit|a réussi|est verte|est vert|est au vert|fonctionne|est ok)"),
		done(ScopeBuild, "(compile|compilent) (sans erreur|sans erreurs|correctement|proprement|sans avertissement)"),
		// deploy
		done(ScopeDeploy, "(déployé|déployée|déployés|mis en production|livré|publié|publiée) (en|sur|vers|dans) "+
			"(production|prod|staging|la prod|la production|préproduction|préprod)"),
		done(ScopeDeploy, "(j'ai|nous avons|on a) (déployé|mis en production|livré|publié)"),
		done(ScopeDeploy, "(est|a été|sont|ont été) (maintenant |désormais |)(déployé|déployée|déployés|en production|en ligne)").
			nb("par via avec automatiquement lors à chaque"),
		// merge
		done(ScopeMerge, "(mergé|mergée|fusionné|fusionnée|poussé|poussée|intégré|intégrée) (dans|sur|vers|en) "+
			"(main|master|la branche main|la branche principale)"),
		done(ScopeMerge, "(j'ai|nous avons|on a) (mergé|fusionné|poussé|pushé) (la pr|la branche|les changements|le correctif|"+
			"la modification|le commit|les commits|la merge request)"),
		done(ScopeMerge, "(la pr|la pull request|la branche|la merge request) (est|a été) (mergée|fusionnée|intégrée)"),
		// blocked
		blocked("(je ne peux pas|je ne peux plus|nous ne pouvons pas|impossible de) (continuer|poursuivre|avancer|aller plus loin)"),
		blocked("(je suis|nous sommes|je reste) (toujours |actuellement |)(bloqué|bloquée|bloqués|coincé|coincée)"),
		blocked("(je n'ai pas|nous n'avons pas|je n'ai aucun|je n'ai aucune) (accès|les droits|les permissions|les accès|d'accès|" +
			"les identifiants)"),
		// delegation
		request("(pourriez-vous|pouvez-vous|peux-tu|pourrais-tu|veuillez|merci de) (m'envoyer|me fournir|me donner|me transmettre|" +
			"envoyer|fournir|transmettre|lancer|exécuter|ajouter|partager|créer|redémarrer|installer|configurer|m'accorder|accorder)"),
		request("(envoyez-moi|envoie-moi|donnez-moi|fournissez-moi|transmettez-moi|donne-moi)"),
		request("j'ai besoin (que vous|que tu|de votre|de ton)"),
		request("(vous devrez|tu devras|il faudra que vous|il faut que vous)"),
	},
	negators:          "ne pas jamais aucun aucune sans rien personne guère presque partiellement non ni",
	negPrefixes:       "n'",
	negAfter:          "pas jamais",
	hypotheticals:     "si s'il quand lorsque dès avant après sera seront serait seraient devra devront pourra pourrait faudra faut doit doivent vérifiez vérifie vérifier assurez-vous assure-toi pour afin souhaite espère est-ce",
	hypotheticalPairs: "une fois|il faut|à vérifier|jusqu'à ce",
	imperatives:       "vérifiez vérifie lancez lance exécutez testez",
	leadIns:           "puis ensuite alors maintenant d'abord",
	conjunctions:      "et mais donc car puis ensuite parce cependant pourtant or",
	linking:           "est sont c'est était étaient tout maintenant désormais bien enfin déjà a ont",
	complementizers:   "que",
}
